// Package contract runs the port contract suites of test/portstest
// against the real adapters on the test control plane (etcd and
// kube-apiserver from test/controlplane). The in-memory twins run the same
// suites in their own package; together they keep the twins honest.
package contract
