// Package portstest holds the behaviour suite of the object ports, run
// against every implementation — the in-memory twin in
// internal/adapters/memory and the real adapters on the test control plane
// (test/contract) — so that a fake cannot drift from the API server it
// stands in for.
//
// # Writing against the suite
//
// [RunObjects] takes a [Kind] (how to make and change objects of the kind
// under test; [ReplicaSets], [Pods] and [ChaosPods] are the operator's) and
// a factory that returns a [Fixture]: the ports.Reader and ports.Writer
// under test, plus a back door that acts as "someone else" on the same
// store (another client's writer, an authoritative read bypassing any
// cache). Readers backed by a cache lag behind the store, so the suite
// waits with require.Eventually wherever a real cache would.
//
//	func TestStoreContract(t *testing.T) {
//		portstest.RunObjects(t, portstest.ReplicaSets, func(t *testing.T) portstest.Fixture[*appsv1.ReplicaSet, *appsv1.ReplicaSet] {
//			s := memory.NewStore[*appsv1.ReplicaSet](portstest.ReplicaSets.GroupKind)
//			return portstest.Fixture[*appsv1.ReplicaSet, *appsv1.ReplicaSet]{Namespace: "contract", Reader: s, Writer: s, Other: s, Get: s.Get}
//		})
//	}
package portstest
