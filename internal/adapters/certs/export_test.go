package certs

import (
	"context"
	"time"
)

// TestPair is a certificate and key in PEM, for tests.
type TestPair struct{ CertPEM, KeyPEM []byte }

// TestCA issues serving certificates in tests.
type TestCA struct {
	TestPair
	kp *keyPair
}

// NewTestCA creates a CA valid for an hour.
func NewTestCA() (*TestCA, error) {
	kp, err := newCA("test-ca", time.Hour, time.Now())
	if err != nil {
		return nil, err
	}
	return &TestCA{TestPair: TestPair{CertPEM: kp.certPEM, KeyPEM: kp.keyPEM}, kp: kp}, nil
}

// Issue signs a serving certificate for hosts, valid from now for validity.
func (ca *TestCA) Issue(validity time.Duration, hosts ...string) (TestPair, error) {
	kp, err := ca.kp.issueServing(hosts, validity, time.Now())
	if err != nil {
		return TestPair{}, err
	}
	return TestPair{CertPEM: kp.certPEM, KeyPEM: kp.keyPEM}, nil
}

// SetClock makes the source read time from now (rotation tests).
func (s *SelfIssued) SetClock(now func() time.Time) { s.now = now }

// Refresh runs one refresh pass now, as the background loop does.
func (s *SelfIssued) Refresh(ctx context.Context) error { return s.refresh(ctx) }

// WatchedTargets counts the CA bundle targets watched right now, so a test
// changes a target only once its watch would see it.
func (s *SelfIssued) WatchedTargets() int { return int(s.watching.Load()) }
