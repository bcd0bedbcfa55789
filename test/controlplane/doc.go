// Package controlplane runs a real Kubernetes control plane — etcd,
// kube-apiserver and optionally kube-controller-manager — for integration
// and end-to-end tests, the way envtest does for controller-runtime users.
//
// The binaries are built from source by `make tools` (module test/tools,
// pinned to k8s.io/kubernetes and etcd releases) into bin/; set
// OPERATOR_TEST_ASSETS to use another folder. A missing binary fails the
// test with a message that says `make tools`: a test that needs an API
// server never silently skips.
//
// # Starting one
//
//	cp := controlplane.StartT(t, controlplane.Options{})
//	clientset := cp.Clientset()
//
// Every instance has its own CA, ports and temporary folder, so tests may run
// several in parallel. StartT stops the processes (TERM, then KILL) and
// removes the folder in t.Cleanup, and prints the components' logs when the
// test failed.
//
// # What it gives tests
//
//   - an admin *rest.Config (system:masters client certificate) and a
//     kubeconfig file;
//   - clients for a ServiceAccount (TokenRequest API) or an impersonated
//     user, so RBAC can be tested for real (authorization mode is RBAC);
//   - CRD and webhook installation from the repository's config/ folders,
//     with every webhook clientConfig pointed at a local HTTPS server;
//   - serving certificates for that local server, signed by the CA the API
//     server trusts;
//   - an optional audit log, to see exactly which verbs a client used.
package controlplane
