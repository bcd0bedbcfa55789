// Command bench measures the operator binary from outside, the way a
// cluster meets it: it starts its own test control plane (etcd and
// kube-apiserver from test/controlplane, no kube-controller-manager, in a
// temporary folder), installs the CRD and the webhook configurations from
// config/ with every webhook pointed at the local operator, runs the
// operator as a subprocess with the flags of docs/reference.md
// (--kubeconfig, free ports, --metrics-secure=false, a serving
// certificate from the control plane's CA) and drives load at it from
// unthrottled clients (QPS -1).
//
//	make bench                                   # every workload once
//	make bench BENCH_FLAGS="--runs=3 --workloads=rs-backlog,rs-burst"
//	make bench BENCH_FLAGS="--runs=5 --ab=/tmp/old/operator"
//	make bench BENCH_FLAGS="--workloads=scale --plot=docs/scale.svg"
//	go run ./bench --scale=0.1 --chaos-duration=20s   # a quick check
//
// Ctrl-C or SIGTERM stops the operator and the control plane and removes
// the temporary folders. An error (an operator that exits, a denied
// request that should pass, a timeout) prints one clear message and exits
// non-zero; figures are never asserted.
//
// # Workloads
//
// Each runs in a namespace of its own, which it deletes afterwards, with a
// fresh operator process per run.
//
//   - rs-backlog: 2000 ReplicaSets created (c=32) before the operator
//     starts with --controllers=replicaset. converge is from process start
//     until a watch has seen the last hello=world label, so it includes
//     start-up and the initial list; written until another watch has seen
//     the last Labeled Event too. The ceilings are the writes the operator
//     must make, sent directly (c=32) to 2000 fresh ReplicaSets in another
//     namespace, listed first and removed before the operator starts, each
//     ceiling on ReplicaSets of its own: ceiling-labels a label merge PATCH
//     for each, 2000 writes; ceiling that and a Labeled Event create for
//     each, 4000 writes. Each ceiling is timed as the run is, with the
//     same two watches open on its namespace, from its first write until
//     they have seen its last. labeled-ratio = converge / ceiling-labels,
//     ratio = written / ceiling.
//     op-cpu and cp-cpu are the CPU seconds (user and system, from
//     /proc/<pid>/stat) the operator and etcd + kube-apiserver spent from
//     process start until written: what the work cost the machine.
//   - rs-burst: the operator is ready, then 1000 ReplicaSets are created
//     at c=16. converge is from the first create until the last label is
//     seen; creates is how long the creates took beside the operator;
//     ceiling is as many creates at c=16 timed in the same run before the
//     operator starts (in a namespace of their own, removed first), and
//     converge/ceiling the operator against it. op-cpu and cp-cpu
//     as for rs-backlog, from the first create (so the control plane's
//     share of the creates is in cp-cpu).
//   - webhook-mutate: 20 000 Pod CREATE AdmissionReviews POSTed over HTTPS
//     (keep-alive, HTTP/1.1, trusting the control plane CA) straight to
//     /mutate--v1-pod at c=32, after a warm-up of 128. p50 and p99 are per
//     request latencies, rate is requests per second of wall time; every
//     answer is checked (its UID, allowed, a JSON patch), and every 50th
//     patch is applied to its Pod, which must then carry
//     example-mutating-admission-webhook=foo beside its other annotations
//     and be otherwise unchanged. Then the operator
//     stops and an echo webhook (the driver's own binary in a process of
//     its own, on the same address, certificate and server settings) gets
//     the same reviews and answers each with its uid and the same patch,
//     doing nothing else: echo-p99 and echo-rate are the machine's limit,
//     rate/echo and p99/echo the operator against it. Every review's
//     verdict is kept (by review number) and checked: the operator and the
//     echo must each allow every one, and the first denied is named.
//   - webhook-validate: the same at /validate--v1-pod with every 10th Pod
//     lacking the annotation; each review must get its own verdict (every
//     10th denied, the others allowed, from the operator; every one
//     allowed from the echo), and the first that does not is named;
//     denied counts the denials (2000).
//   - memory: 1000 ReplicaSets and 5000 Pods they control (created here,
//     through the operator's own Pod webhooks served by a first operator
//     process running only the chaospod controller). Then the measured
//     process starts with --controllers=replicaset: ready is process start
//     to /readyz 200 with all of that to list, labeled is process start to
//     the last label seen; then, 10 s after that, the driver waits for the
//     process's next garbage collection (the Go runtime runs one at least
//     every 2 min) and reads rss, VmRSS from /proc/<pid>/status (and its
//     parts rss-anon, RssAnon: heap, stacks, the runtime's own, and
//     rss-file, RssFile: the binary's pages read in), and heap,
//     go_memstats_heap_inuse_bytes, right after it: the heap the process
//     keeps, without garbage it happened not to have collected yet.
//     With --memory-chaospods=M, M v1 ChaosPods living an hour are added,
//     their Pods created by a first process running only the chaospod
//     controller, and the measured process runs both controllers
//     (chaospods is M): what the ChaosPods and the status of their Pods
//     cost beside the ReplicaSets.
//     Then what the process caches is checked against its
//     operator_cache_objects gauge (objects per informer, by kind and
//     selector; an informer of every object of a kind counts alone, as it
//     holds what the kind's selecting informers do): of each kind the
//     workload relies on, at least as many as it created and no more than
//     the cluster holds, listed across every namespace. cached-rs,
//     cached-pods (the ChaosPods' Pods among them) and, with
//     --memory-chaospods, cached-chaospods are those counts; a binary
//     missing a kind, or its Pod watch, fails naming it. Last, a heap
//     profile (/debug/pprof/heap?gc=1; every binary runs with
//     --pprof-bind-address) splits the bytes in use by the stack that
//     allocated them: heap-cache (informers: reflector, watch decoding,
//     stores), heap-queue (the work queues: what they keep of the
//     largest burst they held), heap-events (the Event recorders) and
//     heap-other; the libraries holding most of it, and the functions
//     holding most of heap-cache, are logged (bench/heap.go).
//   - chaos: 100 v1 ChaosPods without nextStop, so the operator
//     (--controllers=chaospod) gives each Pod a random 10 s or 20 s life
//     (with --chaos-interval, v2 ChaosPods with that spec.stop.interval),
//     observed for --chaos-duration. deleted is Pod deletions per second
//     over that window. Every stop due in the window must be seen (the
//     watches read on after it until each is, up to --timeout) and at
//     least one must fall due; then every Pod stopped by that time must be
//     replaced (the watches read on until each is). The Pod watch must
//     show each ChaosPod's Pod created once at its start and once after
//     each stop, no more (a Pod of another name, two deletions for one
//     stop) and no fewer (a ChaosPod without its Pod, a stop never
//     replaced); only a Pod stopped in the last moments, after every stop
//     due in the window was seen, may still be on its way. created is how
//     many creations the window's schedule required, counted from the
//     watch: one per ChaosPod and one after each stop due in the window,
//     the same for two binaries doing the same work. For each deletion
//     seen in the window, and each later one of a stop due in it, the
//     lateness is when the Pod watch saw it minus the spec.nextStop its
//     ChaosPod had when the Pod was deleted (matched by resourceVersion,
//     see chaos.go); late-p50, late-p99 and late-max summarise them and
//     early counts negative ones, Pods stopped before their time, which
//     must be 0.
//     Stops bunch on whole seconds: busiest is how many were due in the
//     busiest second and busiest-late the latest of them. limit is that
//     many Pods deleted by the driver at once at a whole second, with no
//     operator running, after the run: when the watch saw the last one go.
//   - scale: at each size of --scale-n, N ReplicaSets each controlling one
//     Pod, or K for a size spelled NxK (created at c=64, the Pods through
//     the Pod webhooks of a first process of the --operator binary,
//     whichever binary is measured; create is how long the creates took;
//     pods is how many), all there before the measured process starts
//     with --controllers=replicaset. The objects of a size are created
//     once, on a control plane of their own; every turn then starts two
//     control planes afresh from a copy of that etcd data, one for each
//     ceiling's writes and one for the binary, so every turn meets the
//     same objects on an API server with no history. list is one
//     metadata-only list of the ReplicaSets and one of the Pods by the
//     driver before the process starts (after an untimed one that fills
//     the restored API server's watch cache), the API server's share of
//     any cache's start-up. ready and labeled as for memory (every
//     ReplicaSet is then listed and checked); written, ceiling-labels,
//     ceiling, labeled-ratio and ratio as for rs-backlog, with N PATCHes
//     (and N Events) sent to the seeded ReplicaSets; rss, heap and its
//     split as for memory; per-object is
//     heap / (N + pods); cached-rs and cached-pods as for memory, checked
//     alike (at least N and pods, no more than the cluster holds); op-cpu
//     and cp-cpu from process start until written.
//     One line per size (and binary), and once every size has run, the
//     exponent k of y = a·n^k fitted to each binary's sizes for labeled,
//     the label ceiling, rss and heap (exponent-labeled, ...). --plot
//     draws labeled and the label ceiling, rss and heap against the
//     objects cached as an SVG, each legend with its exponent; sizes of
//     several Pods per ReplicaSet are squares, on a line of their own.
//
// # Flags
//
//	--operator=bin/operator   the binary measured (A)
//	--ab=PATH[,PATH…]         other binaries (B, C, …); runs alternate A B C,
//	                          C B A, A B C…
//	--workloads=a,b           a subset, by the names above (default all)
//	--runs=N                  runs per workload and binary; medians are printed
//	--chaos-duration=60s      the chaos window
//	--chaos-interval=0        the chaos Pods' life (v2 spec.stop.interval);
//	                          0 for v1's random 10 s or 20 s
//	--memory-chaospods=0      ChaosPods the memory workload adds, with the
//	                          chaospod controller measured too
//	--memprofilerate=0        bytes per heap profile sample in the binaries
//	                          measured (GODEBUG=memprofilerate), for finer
//	                          heap splits, slower; 0 for the default
//	--timeout=5m              how long a workload waits for convergence
//	--scale=1                 multiplies every object and request count
//	--warmup=true             one unmeasured run at a tenth of the scale first
//	                          (not for scale, whose every turn starts afresh)
//	--scale-n=10000,30000     the sizes of the scale workload (N, or NxK for K
//	                          Pods per ReplicaSet); 100000 or 50000x3 take
//	                          long and much memory on a small machine
//	--plot=docs/scale.svg     write the scale workload's plot there
//
// # Reading the output
//
// stdout begins with a `# bench:` line (commit, date, machine, command),
// holds one line per workload, `name  figure=value  …`, and ends with a
// markdown table of the medians in the figures' own spelling, the table
// docs/performance.md pastes with the log it came from (bench/results/);
// progress goes to stderr. Both write paths below the working directory
// relative to it, so a committed log names no checkout. With --runs each figure is the median of its
// runs, figure by figure. With --ab a workload prints A's line, then B's
// and B/A, C's and C/A…, where B/A divides every measured figure of B by
// A's (a ratio above 1 means B is larger: slower for times, faster for
// rates, bigger for memory).
// Durations print as µs, ms or s, rates as /s, sizes as MiB.
//
// Every process shares the machine: the API server, etcd, the operator and
// the load generator compete for the same cores, and on a shared
// development machine so do other people's builds. Figures are for
// comparing runs on one machine (A/B mode alternates binaries for that
// reason), not absolute capacities. ratio in rs-backlog is the most
// portable figure, since the ceiling meets the same API server. Every
// measured turn ends with steal, the share of the machine's CPU time
// (/proc/stat) a hypervisor gave to other machines during the turn: on a
// virtual machine, a turn with much of it ran on less than two cores,
// and its figures say so rather than the binary. It is never divided in
// B/A.
package main
