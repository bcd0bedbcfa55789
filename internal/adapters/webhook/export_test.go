package webhook

import (
	"context"
	"net/http"
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
	return ca.IssueAt(time.Now(), validity, hosts...)
}

// IssueAt signs a serving certificate as if issued at now.
func (ca *TestCA) IssueAt(now time.Time, validity time.Duration, hosts ...string) (TestPair, error) {
	kp, err := ca.kp.issueServing(hosts, validity, now)
	if err != nil {
		return TestPair{}, err
	}
	return TestPair{CertPEM: kp.certPEM, KeyPEM: kp.keyPEM}, nil
}

// SetClock makes the source read time from now (rotation tests).
func (s *SelfCertSource) SetClock(now func() time.Time) { s.now = now }

// Refresh runs one refresh pass now, as the background loop does.
func (s *SelfCertSource) Refresh(ctx context.Context) error { return s.refresh(ctx) }

// OpenConns counts the connections the server tracks.
func OpenConns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Handler is what the server serves, without TLS or a listener: for
// benchmarks of a request's own cost.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }
