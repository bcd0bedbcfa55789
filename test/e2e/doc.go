// Package e2e runs the built operator binary against the test control plane,
// the way a user deploys it: flags, environment, a kubeconfig, signals and
// exit codes. Tests build bin/operator once per run (TestMain).
package e2e
