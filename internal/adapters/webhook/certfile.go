package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/certreads"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// Names of the files in a certificate folder (the kubernetes.io/tls Secret
// layout, and what cert-manager writes).
const (
	CertFileName = "tls.crt"
	KeyFileName  = "tls.key"
)

// FileCertSource serves tls.crt/tls.key from a folder and reloads them when
// their content changes, without a restart: every new TLS handshake picks
// up the current pair, connections already open keep theirs.
//
// It polls file contents rather than watching for events: a mounted Secret
// changes by swapping a symlink, which content hashing follows for free, and
// a pair caught half-written is simply retried on the next tick.
type FileCertSource struct {
	files    CertFiles
	interval time.Duration
	log      *zap.Logger

	cert atomic.Pointer[tls.Certificate]

	mu       sync.Mutex
	reads    certreads.Counters
	lastSeen [sha256.Size]byte // of the last content tried, loaded or not
	lastBad  bool              // whether that content failed
	cancel   context.CancelFunc
	done     chan struct{}
}

var _ ports.CertSource = (*FileCertSource)(nil)

// CertFiles name a certificate and its key in a folder, as kubebuilder's
// --webhook-cert-path, --webhook-cert-name and --webhook-cert-key do.
type CertFiles struct {
	Dir string
	// CertName and KeyName default to CertFileName and KeyFileName.
	CertName, KeyName string
}

func (f CertFiles) withDefaults() CertFiles {
	if f.CertName == "" {
		f.CertName = CertFileName
	}
	if f.KeyName == "" {
		f.KeyName = KeyFileName
	}
	return f
}

// NewFileCertSource returns a source for files, re-read every interval
// (DefaultCertPollInterval when 0). It reads nothing until Start.
func NewFileCertSource(files CertFiles, interval time.Duration, logger *zap.Logger) (*FileCertSource, error) {
	if files.Dir == "" {
		return nil, errors.New("webhook certificate: no certificate folder")
	}
	if logger == nil {
		return nil, errors.New("webhook certificate: logger is required")
	}
	if interval == 0 {
		interval = DefaultCertPollInterval
	}
	if interval < 0 {
		return nil, errors.New("webhook certificate: negative poll interval")
	}
	return &FileCertSource{files: files.withDefaults(), interval: interval, log: logger, reads: certreads.New()}, nil
}

// RegisterMetrics counts the source's reads of its files on reg, in
// controller-runtime's certwatcher_read_certificate_total and
// certwatcher_read_certificate_errors_total (the metrics server counts its
// own into the same series). Until then they are counted nowhere.
func (s *FileCertSource) RegisterMetrics(reg prometheus.Registerer) error {
	reads, err := certreads.Register(reg)
	if err != nil {
		return fmt.Errorf("webhook certificate: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = reads
	return nil
}

// Start loads the pair, failing when it is missing or invalid, and then
// watches for changes in the background.
func (s *FileCertSource) Start(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		return errors.New("webhook certificate: source already started")
	}
	if _, err := s.reloadLocked(); err != nil {
		return fmt.Errorf("webhook certificate: %w", err)
	}
	s.logLoaded()
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go s.poll(ctx, s.done)
	return nil
}

// Stop ends the background watch.
func (s *FileCertSource) Stop(ctx context.Context) error {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop webhook certificate watch: %w", ctx.Err())
	}
}

// GetCertificate returns the current pair.
func (s *FileCertSource) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no certificate loaded from %s", s.files.Dir)
}

func (s *FileCertSource) poll(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		changed, err := s.reloadLocked()
		s.mu.Unlock()
		switch {
		case err != nil:
			// Logged once per content: the next change is retried, the
			// current certificate keeps being served meanwhile.
			s.log.Info("webhook certificate reload failed, serving the previous one", zap.String("dir", s.files.Dir), zap.Error(err))
		case changed:
			s.logLoaded()
		}
	}
}

// reloadLocked reads the pair and swaps it in when its content changed. It
// returns an error only for content not tried before.
func (s *FileCertSource) reloadLocked() (bool, error) {
	// Every read is counted, and every failed one, as controller-runtime's
	// certwatcher counts them, even when the failure is not reported again.
	s.reads.Total.Inc()
	certPath, keyPath := filepath.Join(s.files.Dir, s.files.CertName), filepath.Join(s.files.Dir, s.files.KeyName)
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		s.reads.Errors.Inc()
		return false, s.seen(err, []byte(err.Error()))
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		s.reads.Errors.Inc()
		return false, s.seen(err, []byte(err.Error()))
	}
	sum := sha256.Sum256(bytes.Join([][]byte{certPEM, keyPEM}, []byte{0}))
	if sum == s.lastSeen && s.cert.Load() != nil {
		if s.lastBad {
			s.reads.Errors.Inc() // still the pair that failed
		}
		return false, nil
	}
	pair, err := parsePair(certPEM, keyPEM)
	if err != nil {
		s.reads.Errors.Inc()
		return false, s.seen(fmt.Errorf("%s and %s: %w", certPath, keyPath, err), bytes.Join([][]byte{certPEM, keyPEM}, []byte{0}))
	}
	s.lastSeen, s.lastBad = sum, false
	s.cert.Store(pair)
	return true, nil
}

// seen remembers a failed attempt so that the same failure is reported once.
func (s *FileCertSource) seen(err error, content []byte) error {
	sum := sha256.Sum256(content)
	if sum == s.lastSeen && s.cert.Load() != nil {
		return nil
	}
	s.lastSeen, s.lastBad = sum, true
	return err
}

func (s *FileCertSource) logLoaded() {
	if c := s.cert.Load(); c != nil && c.Leaf != nil {
		s.log.Info("webhook certificate loaded", zap.String("dir", s.files.Dir), zap.Strings("dnsNames", c.Leaf.DNSNames), zap.Time("notAfter", c.Leaf.NotAfter))
	}
}

// parsePair loads a key pair and its leaf, which readiness and logs use.
func parsePair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse certificate: %w", err)
		}
	}
	return &pair, nil
}
