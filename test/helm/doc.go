// Package helm holds the Helm chart in dist/chart to config/: rendered with
// its default values the chart gives the objects `kubectl kustomize
// config/default` gives, and each of its options gives what the matching
// folder of config/ gives (config/certmanager, config/network-policy,
// config/prometheus, config/grafana, another namespace and name prefix,
// another lease duration). So a change to config/ that the chart lacks,
// or the other way round, fails here. It also lints the chart, decodes
// every non-default rendering strictly into its Go types, and installs,
// upgrades and uninstalls the chart with helm on the test control plane.
//
// helm is bin/helm, built by `make tools` from hack/tools/go.mod, found
// like the control plane's binaries (controlplane.Binary).
package helm
