package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// options are the driver's flags.
type options struct {
	operator string
	// ab are the binaries compared with operator (B, C, …).
	ab            []string
	workloads     []string
	runs          int
	chaosDuration time.Duration
	// chaosInterval, when set, is the chaos workload's spec.stop.interval
	// (v2 ChaosPods); zero leaves it to v1's random 10 s or 20 s.
	chaosInterval time.Duration
	// memoryChaosPods, when set, is how many ChaosPods (each with its
	// Pod) the memory workload adds (before --scale applies), with the
	// chaospod controller running beside the replicaset one.
	memoryChaosPods int
	// memProfileRate, when set, is the runtime.MemProfileRate of the
	// binaries measured (GODEBUG=memprofilerate), for heap profiles finer
	// than the runtime's default; zero leaves the default.
	memProfileRate int
	timeout        time.Duration
	scale          float64
	warmup         bool
	// scaleN are the sizes of the scale workload, one measured point each
	// (before --scale applies).
	scaleN []scaleSize
	// plot is where the scale workload's SVG goes; empty for none.
	plot string
	// command is the invocation, for the plot's caption.
	command string
}

// workload is one benchmark: run measures one operator binary once, in a
// namespace of its own, and stops the operators it started.
type workload struct {
	name string
	run  func(ctx context.Context, e *env, bin, label string) (result, error)
	// perN, instead of run, measures at each count of --scale-n in turn.
	perN func(ctx context.Context, e *env, bin, label string, size scaleSize) (result, error)
}

// job is one line of output: a workload, or the scale workload at one N.
type job struct {
	workload
	size scaleSize // the scale workload's size; zero for the others
}

// workloads in the order they run and print.
var workloads = []workload{
	{name: "rs-backlog", run: runRSBacklog},
	{name: "rs-burst", run: runRSBurst},
	{name: "webhook-mutate", run: runWebhookMutate},
	{name: "webhook-validate", run: runWebhookValidate},
	{name: "memory", run: runMemory},
	{name: "chaos", run: runChaos},
	{name: "scale", perN: runScale},
}

func workloadNames() []string {
	names := make([]string, len(workloads))
	for i, w := range workloads {
		names[i] = w.name
	}
	return names
}

func main() {
	if echoRequested() {
		runEcho()
	}
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, opts)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted: %w", err)
		}
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	var opts options
	var names string
	fs.StringVar(&opts.operator, "operator", "bin/operator", "operator binary to measure (A)")
	var ab string
	fs.StringVar(&ab, "ab", "", "other operator binaries, comma-separated (B, C, …): alternate them with A run by run and print each median and its ratio to A's (B/A, C/A)")
	fs.StringVar(&names, "workloads", strings.Join(workloadNames(), ","), "comma-separated workloads to run")
	fs.IntVar(&opts.runs, "runs", 1, "runs per workload (per binary with --ab); the median is printed")
	fs.DurationVar(&opts.chaosDuration, "chaos-duration", 60*time.Second, "how long the chaos workload observes its ChaosPods")
	fs.DurationVar(&opts.chaosInterval, "chaos-interval", 0, "the chaos workload's Pod life (v2 ChaosPods' spec.stop.interval, at least 1s); 0 for v1 ChaosPods and a random 10s or 20s")
	fs.IntVar(&opts.memoryChaosPods, "memory-chaospods", 0, "ChaosPods (each with its Pod, living an hour) the memory workload adds to its ReplicaSets and Pods, measured with both controllers running; 0 for none and the replicaset controller alone")
	fs.IntVar(&opts.memProfileRate, "memprofilerate", 0, "bytes allocated per heap profile sample in the binaries measured (GODEBUG=memprofilerate, 1 for every allocation), for finer heap splits at a cost in speed; 0 for the runtime's default")
	fs.DurationVar(&opts.timeout, "timeout", 5*time.Minute, "how long a workload waits for the operator to converge before failing")
	fs.Float64Var(&opts.scale, "scale", 1, "multiplies every object and request count (e.g. 0.1 for a quick check)")
	fs.BoolVar(&opts.warmup, "warmup", true, "run each workload but scale (whose turns each start a control plane afresh) once at a tenth of its scale, unmeasured, before its measured runs")
	var scaleN string
	fs.StringVar(&scaleN, "scale-n", "10000,30000", "comma-separated sizes of the scale workload: N ReplicaSets each owning one Pod, or NxK each owning K")
	fs.StringVar(&opts.plot, "plot", "", "write an SVG plot of the scale workload's figures against N to this file")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	opts.command = relative(strings.Join(append([]string{"go run ./bench"}, args...), " "))
	for _, v := range strings.Split(scaleN, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		size, err := parseScaleSize(v)
		if err != nil {
			return opts, fmt.Errorf("--scale-n: %w", err)
		}
		opts.scaleN = append(opts.scaleN, size)
	}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(workloadNames(), n) {
			return opts, fmt.Errorf("unknown workload %q (known: %s)", n, strings.Join(workloadNames(), ", "))
		}
		opts.workloads = append(opts.workloads, n)
	}
	switch {
	case len(opts.workloads) == 0:
		return opts, errors.New("--workloads names none")
	case opts.runs < 1:
		return opts, errors.New("--runs must be at least 1")
	case opts.scale <= 0:
		return opts, errors.New("--scale must be positive")
	case opts.chaosDuration < time.Second:
		return opts, errors.New("--chaos-duration must be at least 1s")
	case opts.chaosInterval != 0 && opts.chaosInterval < time.Second:
		return opts, errors.New("--chaos-interval must be 0 or at least 1s")
	case opts.memoryChaosPods < 0:
		return opts, errors.New("--memory-chaospods must be 0 or more")
	case opts.memProfileRate < 0:
		return opts, errors.New("--memprofilerate must be 0 or more")
	case len(opts.scaleN) == 0 && slices.Contains(opts.workloads, "scale"):
		return opts, errors.New("--scale-n names no count")
	case opts.plot != "" && !slices.Contains(opts.workloads, "scale"):
		return opts, errors.New("--plot draws the scale workload, which --workloads leaves out")
	}
	var err error
	if opts.operator, err = binary(opts.operator); err != nil {
		return opts, err
	}
	for _, path := range strings.Split(ab, ",") {
		if path = strings.TrimSpace(path); path == "" {
			continue
		}
		if path, err = binary(path); err != nil {
			return opts, err
		}
		opts.ab = append(opts.ab, path)
	}
	return opts, nil
}

// binary makes path absolute and checks that it is an executable file.
func binary(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(abs)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("operator binary %s not found or not executable (make build writes bin/operator)", abs)
	}
	return abs, nil
}

// n scales a workload's object or request count, never below 1.
func (o options) n(base int) int { return max(1, int(float64(base)*o.scale)) }

func run(ctx context.Context, opts options) error {
	began := time.Now()
	fmt.Println(headerOf(opts.command))
	e, err := startEnv(ctx, opts)
	if err != nil {
		return err
	}
	defer e.stop()

	binaries := []binaryUnderTest{{"A", opts.operator}}
	for i, path := range opts.ab {
		binaries = append(binaries, binaryUnderTest{string(rune('B' + i)), path})
	}
	rep := &report{}
	for _, b := range binaries {
		rep.labels = append(rep.labels, b.label)
	}
	if len(binaries) > 1 {
		names := make([]string, len(binaries))
		for i, b := range binaries {
			names[i] = b.label + " = " + b.path
		}
		logf("%s", strings.Join(names, ", "))
	}
	scalePoints := make([][]result, len(binaries)) // the scale workload's medians, per binary
	for _, w := range jobs(opts) {
		wBegan := time.Now()
		// The scale workload needs none: each of its turns starts a control
		// plane afresh, so none is first.
		if opts.warmup && w.perN == nil {
			// Each binary warms up: what a first run pays is not all the
			// API server's (connections, heap growth are the process's).
			for _, b := range binaries {
				if err := warmUp(ctx, e, w, b.path); err != nil {
					return fmt.Errorf("%s: warm-up: %w", w.name, err)
				}
			}
		}
		perBinary := make([][]result, len(binaries))
		// A and B alternate run by run, and which goes first alternates
		// too (A B, B A, A B...): a slow spell on the machine hits both
		// rather than one, and whatever the first run of a pair pays (a
		// cold API server watch cache, etcd compaction) is shared.
		for i := range opts.runs {
			for k := range binaries {
				b := k
				if i%2 == 1 {
					b = len(binaries) - 1 - k
				}
				bin := binaries[b]
				label := ""
				if len(binaries) > 1 {
					label = bin.label
				}
				logf("%s: run %d/%d %s", w.name, i+1, opts.runs, strings.TrimSpace(label+" "+bin.path))
				r, err := w.turn(ctx, e, bin.path, label)
				if err != nil {
					return fmt.Errorf("%s: %w", w.name, err)
				}
				if opts.runs > 1 {
					logf("%s: run %d/%d %s  %s", w.name, i+1, opts.runs, strings.TrimSpace(label), r)
				}
				perBinary[b] = append(perBinary[b], r)
			}
		}
		medians := make([]result, len(binaries))
		for b := range binaries {
			if medians[b], err = medianOf(perBinary[b]); err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
		}
		rep.add(w.name, medians)
		if w.size.replicaSets > 0 {
			for b := range binaries {
				scalePoints[b] = append(scalePoints[b], medians[b])
			}
		}
		if len(binaries) == 1 {
			fmt.Printf("%-16s  %s\n", w.name, medians[0])
		} else {
			fmt.Printf("%-16s  A    %s\n", w.name, medians[0])
			for b := 1; b < len(binaries); b++ {
				l := binaries[b].label
				fmt.Printf("%-16s  %-4s %s\n", w.name, l, medians[b])
				fmt.Printf("%-16s  %-4s %s\n", w.name, l+"/A", ratioOfResults(medians[0], medians[b]))
			}
		}
		if w.size.replicaSets > 0 && opts.plot != "" {
			// Drawn after every point, so an interrupted run keeps a plot
			// of the points it measured.
			series := make([]scaleSeries, len(binaries))
			for b, bin := range binaries {
				series[b] = scaleSeriesOf(filepath.Base(bin.path), scalePoints[b])
			}
			if err := writePlotFile(opts.plot, series, time.Now(), opts.command); err != nil {
				return err
			}
			logf("plot written to %s", opts.plot)
		}
		logf("%s: done in %s", w.name, time.Since(wBegan).Round(100*time.Millisecond))
	}
	if growth := growthOf(binaries, scalePoints); growth != nil {
		rep.add("scale growth", growth)
		for b, r := range growth {
			fmt.Printf("%-16s  %-4s %s\n", "scale-growth", binaries[b].label, r)
		}
	}
	fmt.Print("\n" + rep.markdown())
	logf("all done in %s", time.Since(began).Round(time.Second))
	return nil
}

// jobs lists what run measures, in order: the chosen workloads, the scale
// workload once per --scale-n count.
func jobs(opts options) []job {
	var out []job
	for _, w := range workloads {
		if !slices.Contains(opts.workloads, w.name) {
			continue
		}
		if w.perN == nil {
			out = append(out, job{workload: w})
			continue
		}
		for _, size := range opts.scaleN {
			out = append(out, job{workload: w, size: size})
		}
	}
	return out
}

// runOnce measures one binary once.
func (j job) runOnce(ctx context.Context, e *env, bin, label string) (result, error) {
	if j.perN != nil {
		return j.perN(ctx, e, bin, label, j.size)
	}
	return j.run(ctx, e, bin, label)
}

// turn is one measured run of bin, with the share of the machine's CPU
// time the hypervisor took meanwhile (steal) as its last figure: turns
// that differ more than the binaries do can say why.
func (j job) turn(ctx context.Context, e *env, bin, label string) (result, error) {
	before, err := readMachineCPU()
	if err != nil {
		return nil, err
	}
	r, err := j.runOnce(ctx, e, bin, label)
	if err != nil {
		return nil, err
	}
	after, err := readMachineCPU()
	if err != nil {
		return nil, err
	}
	return append(r, after.stealSince(before)), nil
}

// warmUp runs w once with bin at a tenth of its scale (a chaos window of at
// most 15 s) and throws the figures away. A workload's first run on a fresh
// control plane pays for what the API server does once (its first
// conversions and admission calls for a kind, connections, heap growth),
// so without a warm-up the first binary in the rotation would carry that
// cost in its figures.
func warmUp(ctx context.Context, e *env, w job, bin string) error {
	saved := e.opts
	defer func() { e.opts = saved }()
	e.opts.scale = saved.scale / 10
	e.opts.chaosDuration = min(saved.chaosDuration, 15*time.Second)
	logf("%s: warm-up %s", w.name, bin)
	_, err := w.runOnce(ctx, e, bin, "warmup")
	return err
}

// binaryUnderTest is one binary a run measures, and its letter.
type binaryUnderTest struct{ label, path string }

// growthOf is, for each binary, the exponents fitted to its scale sizes
// (exponentFigures); nil unless every binary has two sizes at least.
func growthOf(binaries []binaryUnderTest, points [][]result) []result {
	out := make([]result, len(binaries))
	for b, bin := range binaries {
		if len(points[b]) < 2 {
			return nil
		}
		out[b] = exponentFigures(scaleSeriesOf(filepath.Base(bin.path), points[b]))
		if len(out[b]) == 0 {
			return nil
		}
	}
	return out
}
