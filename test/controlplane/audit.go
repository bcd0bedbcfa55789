package controlplane

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// AuditEvent is the part of an audit.k8s.io/v1 Event that tests look at.
type AuditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string   `json:"username"`
		Groups   []string `json:"groups"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	RequestURI     string `json:"requestURI"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	// Annotations carry the authorizer's verdict:
	// "authorization.k8s.io/decision" is "allow" or "forbid".
	Annotations map[string]string `json:"annotations"`
}

// ForbiddenByAuthorizer reports whether the authorizer (RBAC) refused the
// request, as opposed to an admission plugin or policy answering 403.
func (e AuditEvent) ForbiddenByAuthorizer() bool {
	return e.Annotations["authorization.k8s.io/decision"] == "forbid"
}

// AuditEvents reads the audit log written so far (Options.AuditPolicy must
// be set).
func (cp *ControlPlane) AuditEvents() ([]AuditEvent, error) {
	if cp.AuditLogPath == "" {
		return nil, errors.New("audit log is off: set Options.AuditPolicy")
	}
	f, err := os.Open(cp.AuditLogPath)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer func() { _ = f.Close() }()
	var events []AuditEvent
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for s.Scan() {
		var e AuditEvent
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			continue // a line being written right now
		}
		events = append(events, e)
	}
	return events, s.Err()
}
