// Package node runs the operator the way users do: on a real node. It
// extends the test control plane (test/controlplane) with a kubelet,
// kube-scheduler, kube-proxy and the controllers a Deployment needs, over
// containerd and runc, with Pods in network namespaces on a CNI bridge.
//
// # What it needs
//
// Root, the Debian packages hack/node-setup.sh installs (containerd, runc,
// containernetworking-plugins, iproute2, iptables) and the binaries
// test/tools/node/build.sh builds into bin/ (kubelet and kube-proxy from
// Kubernetes 1.35, the last release whose kubelet drives containerd 1.x;
// kube-scheduler from the control plane's release). `make test-node` does
// all of it and sets OPERATOR_NODE_TEST=1; without that variable the tests
// skip, so `go test ./...` passes on a machine without the node parts.
// With it, a missing part fails the test.
//
// # Images without a registry
//
// No registry is reachable, so the images are written here as OCI archives
// (image.go) and imported with `ctr images import`: the sandbox image from
// the Go pause program in ./pause, and the operator's image from `make
// build`'s static binary on a base layer equal in content to distroless
// static:nonroot. The Dockerfile stays the release path (docs/node.md).
//
// # Leaving nothing behind
//
// Everything the cluster creates (processes, mounts, network namespaces,
// interfaces, iptables chains, cgroups) is recorded against a snapshot
// taken before it starts; Stop tears it down and fails when anything is
// left.
package node
