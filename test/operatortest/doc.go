// Package operatortest runs the operator in-process against a test control
// plane (test/controlplane), for tests outside the operator's own packages:
// test/integration and the examples' end-to-end tests share it instead of
// each keeping a copy.
//
// [Config] is the configuration such a test runs the operator with (the
// control plane's kubeconfig, a serving certificate from the control
// plane's CA, every server on a free port); [Start] builds the application
// as main does, with the test's fx options last, starts it and stops it
// when the test ends. The returned [Operator] reads the operator's metrics
// and holds its webhook table, which [InstallWebhooks] registers with the
// control plane.
//
// The package is test support: it calls t.Fatal on failure and is imported
// only by _test.go files.
package operatortest
