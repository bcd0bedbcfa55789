// Package e2e runs the built operator binary against the test control plane,
// the way a user deploys it: flags, environment, a kubeconfig, signals and
// exit codes. TestMain builds the binary once per run, into a temporary
// directory, with test/operatorproc, which also runs it.
package e2e
