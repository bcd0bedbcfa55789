// Package portstest holds the behaviour suites of the outbound ports: one
// suite per port (or pair of ports that only make sense together), run
// against every implementation — the in-memory twin in
// internal/adapters/memory and the real adapters on the test control plane —
// so that a fake cannot drift from the API server it stands in for.
//
// # Writing against a suite
//
// A suite takes a factory that returns a fixture: the implementation under
// test plus a back door that acts as "someone else" on the same store
// (create an object, write a foreign field, read the authoritative state
// bypassing any cache). Readers backed by a cache lag behind the store, so
// the suites wait with require.Eventually wherever a real cache would.
//
//	func TestReplicaSetStore(t *testing.T) {
//		portstest.RunReplicaSetStore(t, func(t *testing.T) portstest.ReplicaSetFixture {
//			...
//		})
//	}
package portstest
