// Package apptest builds the operator's whole application for a test, so
// that swapping one adapter is one fx.Decorate or fx.Replace beside
// [New], not a kubeconfig file on disk and a struct to pull values out.
// The graph is built but never started, against an API server that does
// not exist, so nothing reaches a real cluster by accident; to run the
// operator against a control plane, use test/operatortest.
package apptest
