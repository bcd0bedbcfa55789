// Package portstest holds the behaviour suite of the object ports, run
// against every implementation (the in-memory twin in
// internal/adapters/memory, and the real adapters on the test control plane
// in test/contract) so that a fake cannot drift from the API server.
//
// [RunObjects] takes a [Kind] ([ReplicaSets], [Pods], [ChaosPods]) and a
// factory of [Fixture]s: the ports.Reader and ports.Writer under test and a
// back door into the same store, and the label selector the reader is
// narrowed by, if any, which the suite then holds it to. Readers backed by
// a cache lag behind the store, so the suite waits wherever a real cache
// would.
//
//	portstest.RunObjects(t, portstest.ReplicaSets, func(t *testing.T) portstest.Fixture[*appsv1.ReplicaSet, *appsv1.ReplicaSet] {
//		s := memory.NewStore[*appsv1.ReplicaSet](portstest.ReplicaSets.GroupKind)
//		return portstest.Fixture[*appsv1.ReplicaSet, *appsv1.ReplicaSet]{Namespace: "contract", Reader: s, Writer: s, Other: s, Get: s.Get}
//	})
package portstest
