// Command kube-proxy is the upstream Service proxy (iptables mode), built
// from the node tier's pinned k8s.io/kubernetes module, the kubelet's
// release: Pods reach Services, the API server's among them, through its
// rules.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-proxy/app"
)

func main() {
	os.Exit(cli.Run(app.NewProxyCommand()))
}
