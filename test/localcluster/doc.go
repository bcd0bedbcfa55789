// Command localcluster is `make run`: it starts a local control plane (etcd,
// kube-apiserver, kube-controller-manager), installs what the operator needs
// from config/ with webhooks pointed at the local process, starts
// bin/operator against it as the ServiceAccount of config/rbac (so a
// missing permission shows up here first) and prints how to use it. Ctrl-C stops
// everything; state lives in the --state folder.
package main
