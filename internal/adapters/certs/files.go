package certs

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hexagonal-operator/operator/internal/background"
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
	background.Loop
	use      string
	files    Files
	interval time.Duration
	log      *zap.Logger
	reads    Reads

	cert     atomic.Pointer[tls.Certificate]
	lastSeen [sha256.Size]byte // of the last content tried; only the loop uses it
}

// NewFileSource returns a source for files, re-read every interval
// (DefaultPollInterval when 0). use ("webhook", "metrics") starts its log
// lines.
func NewFileSource(use string, files Files, interval time.Duration, reads Reads, logger *zap.Logger) (*FileSource, error) {
	switch {
	case files.Dir == "":
		return nil, fmt.Errorf("%s certificate: no certificate folder", use)
	case interval < 0:
		return nil, fmt.Errorf("%s certificate: negative poll interval", use)
	case logger == nil || reads.Total == nil || reads.Errors == nil:
		return nil, fmt.Errorf("%s certificate: logger and read counters are required", use)
	}
	return &FileSource{use: use, files: files, interval: cmp.Or(interval, DefaultPollInterval), log: logger, reads: reads}, nil
}

// Start loads the pair, failing when it is missing or invalid, and then
// re-reads it in the background.
func (s *FileSource) Start(context.Context) error {
	if _, err := s.reload(); err != nil {
		return err
	}
	s.logLoaded()
	return s.Loop.Start(s.use+" certificate files", s.poll)
}

// Stop ends the polling, waiting for it within ctx.
func (s *FileSource) Stop(ctx context.Context) error {
	return s.Loop.Stop(ctx, s.use+" certificate files")
}

// GetCertificate returns the current pair.
func (s *FileSource) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no certificate loaded from %s", s.files.Dir)
}

func (s *FileSource) poll(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		switch changed, err := s.reload(); {
		case err != nil:
			// Logged once per content.
			s.log.Info(s.use+" certificate reload failed, serving the previous one", zap.String("dir", s.files.Dir), zap.Error(err))
		case changed:
			s.logLoaded()
		}
	}
}

// reload reads the pair and swaps it in when its content changed. It
// returns an error only for content not tried before, but counts every
// read and failure.
func (s *FileSource) reload() (bool, error) {
	s.reads.Total.Inc()
	pair, content, err := s.read()
	if err != nil {
		s.reads.Errors.Inc()
	}
	sum := sha256.Sum256(content)
	if sum == s.lastSeen && s.cert.Load() != nil {
		return false, nil
	}
	s.lastSeen = sum
	if err != nil {
		return false, err
	}
	s.cert.Store(pair)
	return true, nil
}

// read returns the pair and what identifies its content (or the failure).
func (s *FileSource) read() (*tls.Certificate, []byte, error) {
	certPath, keyPath := s.files.paths()
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, []byte(err.Error()), err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, []byte(err.Error()), err
	}
	content := bytes.Join([][]byte{certPEM, keyPEM}, []byte{0})
	pair, err := tls.X509KeyPair(certPEM, keyPEM) // sets the leaf, which readiness, logs and metrics read
	if err != nil {
		return nil, content, fmt.Errorf("%s and %s: %w", certPath, keyPath, err)
	}
	return &pair, content, nil
}

func (s *FileSource) logLoaded() {
	c := s.cert.Load()
	s.log.Info(s.use+" certificate loaded", zap.String("dir", s.files.Dir), zap.Strings("dnsNames", c.Leaf.DNSNames), zap.Time("notAfter", c.Leaf.NotAfter))
}
