// Command probe is the node tier's in-cluster client: it GETs a URL over
// HTTPS, with the Pod's ServiceAccount token when there is one, and writes
// the status code to its termination message, which the test reads from
// the Pod's status (the API server does not proxy to this node's kubelet).
package main
