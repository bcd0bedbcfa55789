// Package integration starts the operator's fx application in-process
// against the test control plane and checks what it does through the real
// API server. Tests swap adapters with fx.Decorate where that is the point.
package integration
