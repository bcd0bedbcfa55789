package certs

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Files name a certificate and its key in a folder; the names default to
// those of a kubernetes.io/tls Secret.
type Files struct {
	Dir               string
	CertName, KeyName string
}

func (f Files) paths() (string, string) {
	return filepath.Join(f.Dir, cmp.Or(f.CertName, "tls.crt")), filepath.Join(f.Dir, cmp.Or(f.KeyName, "tls.key"))
}

// DefaultPollInterval is how often certificate files are re-read.
const DefaultPollInterval = 3 * time.Second

// FileSource serves a certificate and key from files and reloads them when
// their content changes. It polls contents rather than watching for
// events: that follows a Secret volume's symlink swap for free, and a pair
// caught half-written is retried on the next tick.
type FileSource struct {
	use      string
	files    Files
	interval time.Duration
	log      *zap.Logger
	reads    Reads

	cert atomic.Pointer[tls.Certificate]

	mu       sync.Mutex
	lastSeen [sha256.Size]byte // of the last content tried, loaded or not
	lastBad  bool              // whether that content failed
	cancel   context.CancelFunc
	done     chan struct{}
}

// NewFileSource returns a source for files, re-read every interval
// (DefaultPollInterval when 0). use ("webhook", "metrics") starts its log
// lines.
func NewFileSource(use string, files Files, interval time.Duration, reads Reads, logger *zap.Logger) (*FileSource, error) {
	switch {
	case files.Dir == "":
		return nil, fmt.Errorf("%s certificate: no certificate folder", use)
	case logger == nil || reads.Total == nil || reads.Errors == nil:
		return nil, fmt.Errorf("%s certificate: logger and read counters are required", use)
	case interval < 0:
		return nil, fmt.Errorf("%s certificate: negative poll interval", use)
	case interval == 0:
		interval = DefaultPollInterval
	}
	return &FileSource{use: use, files: files, interval: interval, log: logger, reads: reads}, nil
}

// Start loads the pair, failing when it is missing or invalid, and then
// re-reads it in the background.
func (s *FileSource) Start(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		return errors.New("certificate files already watched")
	}
	if _, err := s.reloadLocked(); err != nil {
		return err
	}
	s.logLoaded()
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go s.poll(ctx, s.done)
	return nil
}

// Stop ends the background reads.
func (s *FileSource) Stop(ctx context.Context) error {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	return stop(ctx, cancel, done)
}

// stop cancels a background loop and waits, within ctx, until it is done.
func stop(ctx context.Context, cancel context.CancelFunc, done chan struct{}) error {
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop certificate source: %w", ctx.Err())
	}
}

// GetCertificate returns the current pair.
func (s *FileSource) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no certificate loaded from %s", s.files.Dir)
}

func (s *FileSource) poll(ctx context.Context, done chan struct{}) {
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
			// Logged once per content.
			s.log.Info(s.use+" certificate reload failed, serving the previous one", zap.String("dir", s.files.Dir), zap.Error(err))
		case changed:
			s.logLoaded()
		}
	}
}

// reloadLocked reads the pair and swaps it in when its content changed. It
// returns an error only for content not tried before, but counts every
// read and failure.
func (s *FileSource) reloadLocked() (bool, error) {
	s.reads.Total.Inc()
	certPath, keyPath := s.files.paths()
	certPEM, err := os.ReadFile(certPath)
	if err == nil {
		var keyPEM []byte
		if keyPEM, err = os.ReadFile(keyPath); err == nil {
			return s.swap(certPath, keyPath, certPEM, keyPEM)
		}
	}
	s.reads.Errors.Inc()
	return false, s.seen(err, []byte(err.Error()))
}

func (s *FileSource) swap(certPath, keyPath string, certPEM, keyPEM []byte) (bool, error) {
	content := bytes.Join([][]byte{certPEM, keyPEM}, []byte{0})
	if sha256.Sum256(content) == s.lastSeen && s.cert.Load() != nil {
		if s.lastBad {
			s.reads.Errors.Inc() // still the pair that failed
		}
		return false, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM) // sets the leaf, which readiness, logs and metrics read
	if err != nil {
		s.reads.Errors.Inc()
		return false, s.seen(fmt.Errorf("%s and %s: %w", certPath, keyPath, err), content)
	}
	s.lastSeen, s.lastBad = sha256.Sum256(content), false
	s.cert.Store(&pair)
	return true, nil
}

// seen remembers a failed attempt so that the same failure is reported once.
func (s *FileSource) seen(err error, content []byte) error {
	sum := sha256.Sum256(content)
	if sum == s.lastSeen && s.cert.Load() != nil {
		return nil
	}
	s.lastSeen, s.lastBad = sum, true
	return err
}

func (s *FileSource) logLoaded() {
	c := s.cert.Load()
	s.log.Info(s.use+" certificate loaded", zap.String("dir", s.files.Dir), zap.Strings("dnsNames", c.Leaf.DNSNames), zap.Time("notAfter", c.Leaf.NotAfter))
}
