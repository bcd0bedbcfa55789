package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// echoServerEnv, set in the driver's own environment, makes the driver's
// binary serve as the echo webhook instead of running workloads: the
// address and the certificate folder are its two arguments.
const echoServerEnv = "BENCH_ECHO_SERVER"

// echoRequested reports whether this process was started to serve as the
// echo webhook: the driver, and its test binary, re-execute themselves so.
func echoRequested() bool {
	return os.Getenv(echoServerEnv) != "" && len(os.Args) == 3
}

// runEcho serves as the echo webhook until SIGTERM and exits.
func runEcho() {
	if err := serveEcho(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "bench echo: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// echoPatch is the JSON patch the echo answers mutations with: the one the
// operator's Pod mutation returns for the bench's Pods, so both answers
// are about the same size.
var echoPatch = base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/metadata/annotations/example-mutating-admission-webhook","value":"foo"}]`))

// serveEcho is the echo webhook: the least any webhook must do for a
// review (read the body, find the request's uid, answer with it), on the
// operator's webhook server settings (TLS 1.2 at least, HTTP/1.1, the same
// timeouts and header limit). It decodes only the uid, with encoding/json
// into a one-field struct, the cheapest standard decoding of a review.
// It stops on SIGTERM.
func serveEcho(addr, certDir string) error {
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		return fmt.Errorf("load certificate: %w", err)
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	srv := &http.Server{
		Addr:              addr,
		Handler:           http.HandlerFunc(echoReview),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}},
		Protocols:         protocols,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		// startEcho's readiness probe connects without a handshake.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServeTLS("", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func echoReview(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 7<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review struct {
		Request struct {
			UID string `json:"uid"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &review); err != nil || review.Request.UID == "" {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	patch := ""
	if r.URL.Path == podMutatePath {
		patch = `,"patchType":"JSONPatch","patch":"` + echoPatch + `"`
	}
	uid, _ := json.Marshal(review.Request.UID)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":`+string(uid)+`,"allowed":true`+patch+`}}`)
}

// echoProcess is a running echo webhook.
type echoProcess struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// startEcho runs the echo webhook as a process of its own on the
// operator's webhook address, as the operator runs, and returns once it
// accepts connections.
func (e *env) startEcho(ctx context.Context) (*echoProcess, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, e.webhook, e.certDir)
	cmd.Env = append(os.Environ(), echoServerEnv+"=1")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start echo webhook: %w", err)
	}
	p := &echoProcess{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", e.webhook)
		if err == nil {
			_ = conn.Close()
			return p, nil
		}
		select {
		case <-p.exited:
			return nil, errors.New("echo webhook exited before serving")
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("echo webhook not serving on %s after 10s", e.webhook)
		}
	}
}

// stop ends the process and waits for it, so the address is free again.
func (p *echoProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
