// Package operatorproc runs the operator binary as a child process for
// black-box tests: it builds ./cmd/operator once, starts it with flags and
// environment, signals or kills it, waits for its exit code and reads its
// probes and metrics over HTTP, the way a kubelet and Prometheus see it.
//
// # Using it
//
//	bin, err := operatorproc.Build(repoRoot, dir) // once, in TestMain
//	p := operatorproc.RunAgainst(t, bin, cp, "--controllers=replicaset")
//	require.NoError(t, p.Signal(syscall.SIGTERM))
//	require.Equal(t, 0, p.Wait(t, 15*time.Second))
//
// [RunAgainst] points the binary at a test control plane with free ports, a
// serving certificate the API server trusts and plain-HTTP metrics, and
// returns once /readyz answers 200.
//
// # Nothing outlives a test
//
// Every process is killed in t.Cleanup when it is still running, and gets
// SIGKILL from the kernel (Pdeathsig) should the test binary die without
// running its cleanups. Its combined stdout and stderr are printed when the
// test failed.
//
// # Races in the process
//
// Under `go test -race`, [Build] builds the operator with the race detector
// too, and a process whose output holds a race report fails its test in
// t.Cleanup, even when it was killed or its exit code never looked at.
// [BuildRelease] always builds the static release binary, for a test that
// measures the process's memory or latency.
package operatorproc
