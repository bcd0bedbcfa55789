// Command kube-controller-manager is the upstream controller manager, built
// from the pinned k8s.io/kubernetes module. Tests run only the controllers
// they need (replicaset, garbagecollector, namespace, serviceaccount-token).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
