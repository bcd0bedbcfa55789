// Package reliability runs the operator binary against a real control plane
// and breaks things on purpose: it kills and stops the leader, takes the API
// server away, compacts etcd under the operator's watches and stops the
// operator under admission load. Each test asserts what must survive (one
// leader at a time, no ReplicaSet left unlabeled, no admitted request lost)
// and prints what it measured as one "figure: <what>=<value>" line.
package reliability
