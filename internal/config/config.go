package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Controller names accepted by --controllers.
const (
	ControllerReplicaSet = "replicaset"
	ControllerChaosPod   = "chaospod"
)

// Webhook certificate modes accepted by --webhook-cert-mode.
const (
	CertModeExternal = "external"
	CertModeSelf     = "self"
)

// Config is the operator's validated configuration: the flags, named as
// they are (their usage text says what each means).
type Config struct {
	Kubeconfig             string
	Namespace              string
	MetricsBindAddress     string
	MetricsSecure          bool
	HealthProbeBindAddress string
	PprofBindAddress       string

	MetricsCertPath string
	MetricsCertName string
	MetricsCertKey  string

	WebhookPort int
	// WebhookCertDir is --webhook-cert-path when given, else
	// --webhook-cert-dir.
	WebhookCertDir     string
	WebhookCertName    string
	WebhookCertKey     string
	WebhookCertMode    string
	WebhookCertSecret  string
	WebhookServiceName string

	MutatingWebhookConfiguration   string
	ValidatingWebhookConfiguration string
	EnableHTTP2                    bool

	LeaderElect             bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration

	ReplicaSetWorkers int
	ChaosPodWorkers   int
	Controllers       []string

	// With ZapDevel, empty Zap* levels and encoder mean the mode's default.
	ZapLogLevel        string
	ZapEncoder         string
	ZapDevel           bool
	ZapStacktraceLevel string
	ZapTimeEncoding    string

	// GCHeapFloor is in bytes; 0 means none.
	GCHeapFloor uint64

	ShutdownTimeout      time.Duration
	WebhookShutdownDelay time.Duration
	Version              bool

	// OperatorNamespace is where the operator itself runs: POD_NAMESPACE,
	// else the leader-election namespace. Not a flag.
	OperatorNamespace string

	webhookCertPath string // folded into WebhookCertDir by Parse
}

// Defaults for the worker counts: each write is a round trip to the API
// server, so several workers keep the connection busy. ChaosPods need more:
// spec.nextStop has whole seconds, so stops of Pods started in the same
// second fall due together, and 128 let such a burst go at once; an idle
// worker is a parked goroutine.
const (
	DefaultReplicaSetWorkers = 16
	DefaultChaosPodWorkers   = 128
)

// DefaultGCHeapFloor is the heap the collector may fill before it collects
// (package gcfloor). It costs memory only to a nearly idle operator, the
// floor itself at most (docs/performance.md).
const DefaultGCHeapFloor = 16 << 20

// inClusterNamespaceFile is where Kubernetes mounts the pod's namespace.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ErrHelp is returned when --help or -h was given; print Usage and exit 0.
var ErrHelp = flag.ErrHelp

// Parse reads args (without the program name) and the environment through
// getenv. The error, if any, is one line naming the offending flag.
func Parse(args []string, getenv func(string) string) (Config, error) {
	var c Config
	fs := newFlagSet(&c, getenv)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, ErrHelp
		}
		return Config{}, cleanFlagError(err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q (flags only)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || envErr != nil {
			return
		}
		key := EnvName(f.Name)
		if v := getenv(key); v != "" {
			if err := f.Value.Set(v); err != nil {
				envErr = fmt.Errorf("invalid value %q for %s (flag --%s): %w", v, key, f.Name, err)
			}
			set[f.Name] = true
		}
	})
	if envErr != nil {
		return Config{}, envErr
	}
	// As in kubebuilder, --zap-devel changes the defaults (debug, console)
	// and an explicit level or encoder still wins.
	if c.ZapDevel {
		if !set["zap-log-level"] {
			c.ZapLogLevel = ""
		}
		if !set["zap-encoder"] {
			c.ZapEncoder = ""
		}
		if !set["zap-stacktrace-level"] {
			c.ZapStacktraceLevel = ""
		}
	}
	if c.webhookCertPath != "" {
		if set["webhook-cert-dir"] && c.WebhookCertDir != c.webhookCertPath {
			return Config{}, fmt.Errorf("flags --webhook-cert-path (%q) and --webhook-cert-dir (%q) name different folders: give one", c.webhookCertPath, c.WebhookCertDir)
		}
		c.WebhookCertDir = c.webhookCertPath
	}
	c.OperatorNamespace = getenv("POD_NAMESPACE")
	if c.OperatorNamespace == "" {
		c.OperatorNamespace = c.LeaderElectionNamespace
	}
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Usage writes the flag documentation, for --help.
func Usage(w io.Writer) {
	var c Config
	fs := newFlagSet(&c, func(string) string { return "" })
	_, _ = fmt.Fprint(w, "Usage: operator [flags]\n\nEvery flag can also be set as OPERATOR_<FLAG> (dashes as underscores, upper case).\n\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		_, _ = fmt.Fprintf(w, "%s\n        %s\n", line, usage)
	})
}

// EnvName is the environment twin of a flag: OPERATOR_<FLAG>.
func EnvName(flagName string) string {
	return "OPERATOR_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func newFlagSet(c *Config, getenv func(string) string) *flag.FlagSet {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	fs.StringVar(&c.Kubeconfig, "kubeconfig", getenv("KUBECONFIG"), "kubeconfig of the cluster to talk to (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)")
	fs.StringVar(&c.Namespace, "namespace", "", "restrict watches and caches to this namespace (default: all namespaces)")
	fs.StringVar(&c.MetricsBindAddress, "metrics-bind-address", ":8443", "address of the Prometheus /metrics endpoint; 0 disables it")
	fs.BoolVar(&c.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS with TokenReview and SubjectAccessReview authorization; false serves plain HTTP")
	fs.StringVar(&c.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "address of /healthz and /readyz (plain HTTP); 0 disables them")
	fs.StringVar(&c.PprofBindAddress, "pprof-bind-address", "0", "address of Go's runtime profiles, /debug/pprof/ (plain HTTP, no authentication: bind it to localhost); 0 disables them")
	fs.StringVar(&c.MetricsCertPath, "metrics-cert-path", "", "folder with the metrics server's certificate, reloaded on change (default: a self-signed certificate made at start)")
	fs.StringVar(&c.MetricsCertName, "metrics-cert-name", "tls.crt", "file name of the metrics server's certificate in --metrics-cert-path")
	fs.StringVar(&c.MetricsCertKey, "metrics-cert-key", "tls.key", "file name of the metrics server's private key in --metrics-cert-path")
	fs.IntVar(&c.WebhookPort, "webhook-port", 9443, "port of the HTTPS admission and conversion webhook server")
	fs.StringVar(&c.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "folder with the webhook server's certificate and key, reloaded on change")
	fs.StringVar(&c.webhookCertPath, "webhook-cert-path", "", "kubebuilder's name for --webhook-cert-dir; wins over it when given")
	fs.StringVar(&c.WebhookCertName, "webhook-cert-name", "tls.crt", "file name of the webhook server's certificate in the certificate folder")
	fs.StringVar(&c.WebhookCertKey, "webhook-cert-key", "tls.key", "file name of the webhook server's private key in the certificate folder")
	fs.StringVar(&c.WebhookCertMode, "webhook-cert-mode", CertModeExternal, "external: certificates are mounted; self: the operator issues, stores and rotates its own")
	fs.StringVar(&c.WebhookCertSecret, "webhook-cert-secret", "hexagonal-operator-webhook-cert", "Secret (in the operator's namespace) that self mode keeps its certificates in")
	fs.StringVar(&c.WebhookServiceName, "webhook-service-name", "hexagonal-operator-webhook-service", "Service the webhook certificate is issued for")
	fs.StringVar(&c.MutatingWebhookConfiguration, "mutating-webhook-configuration-name", "hexagonal-operator-mutating-webhook-configuration", "the operator's MutatingWebhookConfiguration, whose CA bundle self mode keeps")
	fs.StringVar(&c.ValidatingWebhookConfiguration, "validating-webhook-configuration-name", "hexagonal-operator-validating-webhook-configuration", "the operator's ValidatingWebhookConfiguration, whose CA bundle self mode keeps")
	fs.BoolVar(&c.EnableHTTP2, "enable-http2", false, "serve webhooks and metrics over HTTP/2 too (off because of CVE-2023-44487)")
	fs.BoolVar(&c.LeaderElect, "leader-elect", false, "run controllers only on the holder of a Lease")
	fs.StringVar(&c.LeaderElectionID, "leader-election-id", "hexagonal-operator-leader", "name of the leader-election Lease")
	fs.StringVar(&c.LeaderElectionNamespace, "leader-election-namespace", defaultLeaderElectionNamespace(getenv), "namespace of the leader-election Lease: the pod's own ($POD_NAMESPACE) when set")
	fs.DurationVar(&c.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "how long standbys wait before taking over a Lease that is not renewed")
	fs.DurationVar(&c.RenewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long the leader keeps retrying to renew before giving up leadership")
	fs.DurationVar(&c.RetryPeriod, "leader-election-retry-period", 2*time.Second, "how often electors try to acquire or renew the Lease")
	fs.IntVar(&c.ReplicaSetWorkers, "replicaset-workers", DefaultReplicaSetWorkers, "concurrent reconciles of the replicaset controller")
	fs.IntVar(&c.ChaosPodWorkers, "chaospod-workers", DefaultChaosPodWorkers, "concurrent reconciles of the chaospod controller")
	fs.Func("controllers", "comma-separated controllers to run (default replicaset,chaospod); webhooks always serve", func(v string) error {
		c.Controllers = nil
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" && !slices.Contains(c.Controllers, name) {
				c.Controllers = append(c.Controllers, name)
			}
		}
		return nil
	})
	c.Controllers = []string{ControllerReplicaSet, ControllerChaosPod}
	fs.StringVar(&c.ZapLogLevel, "zap-log-level", "info", "log level: debug, info, error, or an integer verbosity (higher is more verbose)")
	fs.StringVar(&c.ZapEncoder, "zap-encoder", "json", "log encoding: json or console")
	fs.BoolVar(&c.ZapDevel, "zap-devel", false, "development logging: console encoding, debug level, stack traces on warnings")
	fs.StringVar(&c.ZapStacktraceLevel, "zap-stacktrace-level", "error", "level from which log lines carry a stack trace: debug, info, warn, error or panic; warn with --zap-devel unless given")
	fs.StringVar(&c.ZapTimeEncoding, "zap-time-encoding", "rfc3339", "encoding of log timestamps: epoch, millis, nano, iso8601, rfc3339 or rfc3339nano")
	c.GCHeapFloor = DefaultGCHeapFloor
	fs.Var((*byteSize)(&c.GCHeapFloor), "gc-heap-floor", "heap the garbage collector may fill before it collects, however little is live, as GOMEMLIMIT spells sizes (B, KiB, MiB, GiB); off disables it")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 30*time.Second, "budget for a graceful stop on SIGTERM/SIGINT")
	fs.DurationVar(&c.WebhookShutdownDelay, "webhook-shutdown-delay", time.Second, "on stop, how long the webhook server goes on serving (closing connections after each response) before it closes its port, so that admission calls already on their way succeed")
	fs.BoolVar(&c.Version, "version", false, "print the version and exit")
	return fs
}

func defaultLeaderElectionNamespace(getenv func(string) string) string {
	if ns := getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if data, err := os.ReadFile(inClusterNamespaceFile); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			return ns
		}
	}
	return "default"
}

func (c *Config) validate() error {
	for _, a := range [][2]string{{"metrics-bind-address", c.MetricsBindAddress}, {"health-probe-bind-address", c.HealthProbeBindAddress}, {"pprof-bind-address", c.PprofBindAddress}} {
		if err := validateBindAddress(a[0], a[1]); err != nil {
			return err
		}
	}
	switch {
	case c.WebhookPort < 1 || c.WebhookPort > 65535:
		return fmt.Errorf("invalid value %d for flag --webhook-port: must be between 1 and 65535", c.WebhookPort)
	case c.WebhookCertMode != CertModeExternal && c.WebhookCertMode != CertModeSelf:
		return fmt.Errorf("invalid value %q for flag --webhook-cert-mode: must be %s or %s", c.WebhookCertMode, CertModeExternal, CertModeSelf)
	case c.WebhookCertMode == CertModeExternal && c.WebhookCertDir == "":
		return errors.New("invalid value \"\" for flag --webhook-cert-dir: external certificate mode needs a folder")
	case c.WebhookCertMode == CertModeSelf && c.WebhookCertSecret == "":
		return errors.New("invalid value \"\" for flag --webhook-cert-secret: self certificate mode needs a Secret name")
	case c.WebhookServiceName == "":
		return errors.New("invalid value \"\" for flag --webhook-service-name: must not be empty")
	case c.WebhookCertName == "" || c.WebhookCertKey == "":
		return errors.New("invalid value \"\" for flag --webhook-cert-name or --webhook-cert-key: must not be empty")
	case c.MetricsCertName == "" || c.MetricsCertKey == "":
		return errors.New("invalid value \"\" for flag --metrics-cert-name or --metrics-cert-key: must not be empty")
	case c.MutatingWebhookConfiguration == "":
		return errors.New("invalid value \"\" for flag --mutating-webhook-configuration-name: must not be empty")
	case c.ValidatingWebhookConfiguration == "":
		return errors.New("invalid value \"\" for flag --validating-webhook-configuration-name: must not be empty")
	case c.LeaderElectionID == "":
		return errors.New("invalid value \"\" for flag --leader-election-id: must not be empty")
	case c.LeaderElectionNamespace == "":
		return errors.New("invalid value \"\" for flag --leader-election-namespace: must not be empty")
	case c.LeaseDuration <= 0:
		return fmt.Errorf("invalid value %s for flag --leader-election-lease-duration: must be positive", c.LeaseDuration)
	case c.RenewDeadline <= 0 || c.RenewDeadline >= c.LeaseDuration:
		return fmt.Errorf("invalid value %s for flag --leader-election-renew-deadline: must be positive and shorter than the lease duration (%s)", c.RenewDeadline, c.LeaseDuration)
	case c.RetryPeriod <= 0 || float64(c.RetryPeriod)*1.2 >= float64(c.RenewDeadline):
		return fmt.Errorf("invalid value %s for flag --leader-election-retry-period: must be positive and, with 20%% jitter, shorter than the renew deadline (%s)", c.RetryPeriod, c.RenewDeadline)
	case c.ReplicaSetWorkers < 1:
		return fmt.Errorf("invalid value %d for flag --replicaset-workers: must be at least 1", c.ReplicaSetWorkers)
	case c.ChaosPodWorkers < 1:
		return fmt.Errorf("invalid value %d for flag --chaospod-workers: must be at least 1", c.ChaosPodWorkers)
	case c.ZapEncoder != "json" && c.ZapEncoder != "console" && !(c.ZapDevel && c.ZapEncoder == ""):
		return fmt.Errorf("invalid value %q for flag --zap-encoder: must be json or console", c.ZapEncoder)
	case !slices.Contains([]string{"debug", "info", "error", "warn", "panic", "fatal", "dpanic"}, c.ZapLogLevel) && !isVerbosity(c.ZapLogLevel) && !(c.ZapDevel && c.ZapLogLevel == ""):
		return fmt.Errorf("invalid value %q for flag --zap-log-level: must be debug, info, error or a non-negative integer", c.ZapLogLevel)
	case !slices.Contains([]string{"debug", "info", "warn", "error", "panic"}, strings.ToLower(c.ZapStacktraceLevel)) && !(c.ZapDevel && c.ZapStacktraceLevel == ""):
		return fmt.Errorf("invalid value %q for flag --zap-stacktrace-level: must be debug, info, warn, error or panic", c.ZapStacktraceLevel)
	case !slices.Contains([]string{"epoch", "millis", "nano", "nanos", "iso8601", "rfc3339", "rfc3339nano"}, strings.ToLower(c.ZapTimeEncoding)):
		return fmt.Errorf("invalid value %q for flag --zap-time-encoding: must be epoch, millis, nano, iso8601, rfc3339 or rfc3339nano", c.ZapTimeEncoding)
	case c.ShutdownTimeout <= 0:
		return fmt.Errorf("invalid value %s for flag --shutdown-timeout: must be positive", c.ShutdownTimeout)
	case c.WebhookShutdownDelay < 0 || c.WebhookShutdownDelay >= c.ShutdownTimeout:
		return fmt.Errorf("invalid value %s for flag --webhook-shutdown-delay: must be at least 0 and shorter than --shutdown-timeout (%s)", c.WebhookShutdownDelay, c.ShutdownTimeout)
	}
	for _, name := range c.Controllers {
		if name != ControllerReplicaSet && name != ControllerChaosPod {
			return fmt.Errorf("invalid value %q for flag --controllers: unknown controller %q (known: %s,%s)", strings.Join(c.Controllers, ","), name, ControllerReplicaSet, ControllerChaosPod)
		}
	}
	return nil
}

// Runs reports whether the named controller is enabled.
func (c Config) Runs(controller string) bool { return slices.Contains(c.Controllers, controller) }

func validateBindAddress(name, addr string) error {
	if addr == "0" {
		return nil
	}
	if _, port, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("invalid value %q for flag --%s: want host:port, :port or 0", addr, name)
	} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("invalid value %q for flag --%s: bad port %q", addr, name, port)
	}
	return nil
}

func isVerbosity(l string) bool {
	n, err := strconv.Atoi(l)
	return err == nil && n >= 0
}

// cleanFlagError rewords the flag package's errors into one line that names
// the flag with two dashes.
func cleanFlagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return fmt.Errorf("unknown flag --%s", strings.TrimLeft(name, "-"))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return fmt.Errorf("flag --%s needs a value", strings.TrimLeft(name, "-"))
	}
	// "invalid value "x" for flag -name: parse error"
	msg = strings.Replace(msg, "for flag -", "for flag --", 1)
	return errors.New(msg)
}

// byteSize is a flag of bytes spelt as GOMEMLIMIT spells them: a number
// with an optional unit (B, KiB, MiB, GiB, TiB); "off" and "0" are 0.
type byteSize uint64

var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

func (b *byteSize) Set(v string) error {
	if v == "off" || v == "0" {
		*b = 0
		return nil
	}
	num, shift := v, uint(0)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(v, u.suffix); ok {
			num, shift = rest, u.shift
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || num == "" {
		return errors.New("want a number of bytes with an optional unit (B, KiB, MiB, GiB, TiB), or off")
	}
	if n > math.MaxUint64>>shift {
		return errors.New("too large")
	}
	*b = byteSize(n << shift)
	return nil
}

// String spells the size in its largest exact unit.
func (b *byteSize) String() string {
	if b == nil || *b == 0 {
		return "off"
	}
	for _, u := range sizeUnits {
		if n := uint64(*b); n&(1<<u.shift-1) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatUint(uint64(*b), 10) + "B"
}
