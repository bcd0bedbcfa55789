package config_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/config"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDefaultsFollowTheSpec(t *testing.T) {
	t.Parallel()
	c, err := config.Parse(nil, env())
	require.NoError(t, err)
	assert.Equal(t, ":8443", c.MetricsBindAddress)
	assert.True(t, c.MetricsSecure)
	assert.Equal(t, ":8081", c.HealthProbeBindAddress)
	assert.Equal(t, "0", c.PprofBindAddress, "profiles off unless asked for")
	assert.Equal(t, 9443, c.WebhookPort)
	assert.Equal(t, "/tmp/k8s-webhook-server/serving-certs", c.WebhookCertDir)
	assert.Equal(t, "external", c.WebhookCertMode)
	assert.Equal(t, "hexagonal-operator-webhook-cert", c.WebhookCertSecret)
	assert.Equal(t, "hexagonal-operator-webhook-service", c.WebhookServiceName)
	assert.Equal(t, "hexagonal-operator-mutating-webhook-configuration", c.MutatingWebhookConfiguration)
	assert.Equal(t, "hexagonal-operator-validating-webhook-configuration", c.ValidatingWebhookConfiguration)
	assert.Equal(t, "tls.crt", c.WebhookCertName)
	assert.Equal(t, "tls.key", c.WebhookCertKey)
	assert.Empty(t, c.MetricsCertPath, "a self-signed metrics certificate unless one is given")
	assert.Equal(t, "tls.crt", c.MetricsCertName)
	assert.Equal(t, "tls.key", c.MetricsCertKey)
	assert.False(t, c.EnableHTTP2)
	assert.False(t, c.LeaderElect)
	assert.Equal(t, "hexagonal-operator-leader", c.LeaderElectionID)
	assert.Equal(t, 15*time.Second, c.LeaseDuration)
	assert.Equal(t, 10*time.Second, c.RenewDeadline)
	assert.Equal(t, 2*time.Second, c.RetryPeriod)
	assert.Equal(t, []string{"replicaset", "chaospod"}, c.Controllers)
	assert.Equal(t, "info", c.ZapLogLevel)
	assert.Equal(t, "json", c.ZapEncoder)
	assert.Equal(t, "error", c.ZapStacktraceLevel, "controller-runtime's production default")
	assert.Equal(t, "rfc3339", c.ZapTimeEncoding, "controller-runtime's default")
	assert.Equal(t, 30*time.Second, c.ShutdownTimeout)
	assert.Equal(t, config.DefaultReplicaSetWorkers, c.ReplicaSetWorkers)
	assert.Equal(t, config.DefaultChaosPodWorkers, c.ChaosPodWorkers)
	assert.Equal(t, uint64(config.DefaultGCHeapFloor), c.GCHeapFloor)
	assert.Empty(t, c.Namespace)
}

func TestEnvironmentAndFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		env   func(string) string
		check func(t *testing.T, c config.Config)
	}{
		{"env twin", nil, env("OPERATOR_WEBHOOK_PORT", "10443", "OPERATOR_LEADER_ELECT", "true"), func(t *testing.T, c config.Config) {
			assert.Equal(t, 10443, c.WebhookPort)
			assert.True(t, c.LeaderElect)
		}},
		{"flag wins over env", []string{"--webhook-port=11443"}, env("OPERATOR_WEBHOOK_PORT", "10443"), func(t *testing.T, c config.Config) {
			assert.Equal(t, 11443, c.WebhookPort)
		}},
		{"kubeconfig from KUBECONFIG", nil, env("KUBECONFIG", "/k"), func(t *testing.T, c config.Config) {
			assert.Equal(t, "/k", c.Kubeconfig)
		}},
		{"pod namespace", nil, env("POD_NAMESPACE", "ops"), func(t *testing.T, c config.Config) {
			assert.Equal(t, "ops", c.OperatorNamespace)
			assert.Equal(t, "ops", c.LeaderElectionNamespace)
		}},
		{"operator namespace falls back to the lease namespace", []string{"--leader-election-namespace=le"}, env(), func(t *testing.T, c config.Config) {
			assert.Equal(t, "le", c.OperatorNamespace)
		}},
		{"controllers list", []string{"--controllers", "chaospod, chaospod"}, env(), func(t *testing.T, c config.Config) {
			assert.Equal(t, []string{"chaospod"}, c.Controllers)
			assert.False(t, c.Runs("replicaset"))
		}},
		{"disabled servers", []string{"--metrics-bind-address=0", "--health-probe-bind-address=0"}, env(), func(t *testing.T, c config.Config) {
			assert.Equal(t, "0", c.MetricsBindAddress)
		}},
		{"profiles on localhost", []string{"--pprof-bind-address=127.0.0.1:6060"}, env(), func(t *testing.T, c config.Config) {
			assert.Equal(t, "127.0.0.1:6060", c.PprofBindAddress)
		}},
		{"heap floor in MiB", []string{"--gc-heap-floor=32MiB"}, env(), func(t *testing.T, c config.Config) {
			assert.Equal(t, uint64(32<<20), c.GCHeapFloor)
		}},
		{"kubebuilder's certificate flags", []string{"--webhook-cert-path=/certs/webhook", "--webhook-cert-name=w.crt", "--webhook-cert-key=w.key", "--metrics-cert-path=/certs/metrics", "--metrics-cert-name=m.crt", "--metrics-cert-key=m.key"}, env(), func(t *testing.T, c config.Config) {
			assert.Equal(t, "/certs/webhook", c.WebhookCertDir)
			assert.Equal(t, "w.crt", c.WebhookCertName)
			assert.Equal(t, "w.key", c.WebhookCertKey)
			assert.Equal(t, "/certs/metrics", c.MetricsCertPath)
			assert.Equal(t, "m.crt", c.MetricsCertName)
			assert.Equal(t, "m.key", c.MetricsCertKey)
		}},
		{"webhook cert path from the environment, equal to the dir", []string{"--webhook-cert-dir=/certs"}, env("OPERATOR_WEBHOOK_CERT_PATH", "/certs"), func(t *testing.T, c config.Config) {
			assert.Equal(t, "/certs", c.WebhookCertDir)
		}},
		{"webhook configuration names", []string{"--mutating-webhook-configuration-name=m", "--validating-webhook-configuration-name=v"}, env(), func(t *testing.T, c config.Config) {
			assert.Equal(t, "m", c.MutatingWebhookConfiguration)
			assert.Equal(t, "v", c.ValidatingWebhookConfiguration)
		}},
		{"heap floor off from the environment", nil, env("OPERATOR_GC_HEAP_FLOOR", "off"), func(t *testing.T, c config.Config) {
			assert.Zero(t, c.GCHeapFloor)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Parse(tt.args, tt.env)
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestBadInputIsOneLineNamingTheFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		env  func(string) string
		want string
	}{
		{[]string{"--no-such-flag"}, env(), "unknown flag --no-such-flag"},
		{[]string{"--webhook-port=abc"}, env(), "--webhook-port"},
		{[]string{"--webhook-port=0"}, env(), "--webhook-port"},
		{[]string{"--webhook-cert-mode=magic"}, env(), "--webhook-cert-mode"},
		{[]string{"--metrics-bind-address=nonsense"}, env(), "--metrics-bind-address"},
		{nil, env("OPERATOR_PPROF_BIND_ADDRESS", "localhost"), "--pprof-bind-address"},
		{[]string{"--leader-election-renew-deadline=20s"}, env(), "--leader-election-renew-deadline"},
		{[]string{"--leader-election-retry-period=9s"}, env(), "--leader-election-retry-period"},
		{[]string{"--replicaset-workers=0"}, env(), "--replicaset-workers"},
		{[]string{"--controllers=replicaset,nope"}, env(), "unknown controller \"nope\""},
		{[]string{"--zap-encoder=xml"}, env(), "--zap-encoder"},
		{[]string{"--zap-log-level=loud"}, env(), "--zap-log-level"},
		{[]string{"--zap-stacktrace-level=verbose"}, env(), "--zap-stacktrace-level"},
		{[]string{"--zap-devel", "--zap-stacktrace-level=3"}, env(), "--zap-stacktrace-level"},
		{nil, env("OPERATOR_ZAP_STACKTRACE_LEVEL", "all"), "--zap-stacktrace-level"},
		{[]string{"--zap-time-encoding=unix"}, env(), "--zap-time-encoding"},
		{nil, env("OPERATOR_ZAP_TIME_ENCODING", "local"), "--zap-time-encoding"},
		{[]string{"--shutdown-timeout=-1s"}, env(), "--shutdown-timeout"},
		{[]string{"--kubeconfig"}, env(), "flag --kubeconfig needs a value"},
		{[]string{"stray"}, env(), "unexpected argument"},
		{nil, env("OPERATOR_SHUTDOWN_TIMEOUT", "soon"), "OPERATOR_SHUTDOWN_TIMEOUT (flag --shutdown-timeout)"},
		{[]string{"--gc-heap-floor=12MB"}, env(), "--gc-heap-floor"},
		{[]string{"--webhook-cert-path=/a", "--webhook-cert-dir=/b"}, env(), "--webhook-cert-path"},
		{[]string{"--webhook-cert-key="}, env(), "--webhook-cert-key"},
		{[]string{"--metrics-cert-name="}, env(), "--metrics-cert-name"},
		{[]string{"--validating-webhook-configuration-name="}, env(), "--validating-webhook-configuration-name"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+tt.want, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse(tt.args, tt.env)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	_, err := config.Parse([]string{"--help"}, env())
	require.ErrorIs(t, err, config.ErrHelp)
	var b bytes.Buffer
	config.Usage(&b)
	assert.Contains(t, b.String(), "-webhook-cert-mode")
	assert.Contains(t, b.String(), "OPERATOR_")
	assert.Contains(t, b.String(), "(default 16MiB)")
}

func TestEnvName(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "OPERATOR_LEADER_ELECTION_LEASE_DURATION", config.EnvName("leader-election-lease-duration"))
}

// --zap-devel changes the logging defaults, as kubebuilder's does; what is
// set explicitly, by flag or environment, still wins.
func TestZapDevelChangesTheDefaultsOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		args           []string
		env            func(string) string
		level, encoder string
	}{
		{"off", nil, env(), "info", "json"},
		{"devel: the mode's defaults", []string{"--zap-devel"}, env(), "", ""},
		{"devel with a level", []string{"--zap-devel", "--zap-log-level=error"}, env(), "error", ""},
		{"devel with an encoder from the environment", []string{"--zap-devel"}, env("OPERATOR_ZAP_ENCODER", "json"), "", "json"},
		{"devel from the environment", nil, env("OPERATOR_ZAP_DEVEL", "true"), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Parse(tt.args, tt.env)
			require.NoError(t, err)
			assert.Equal(t, tt.level, c.ZapLogLevel, "level")
			assert.Equal(t, tt.encoder, c.ZapEncoder, "encoder")
		})
	}
}

func TestZapStacktraceLevelAndTimeEncoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		args         []string
		env          func(string) string
		stack, times string
	}{
		{"defaults", nil, env(), "error", "rfc3339"},
		{"devel: the mode's stack level", []string{"--zap-devel"}, env(), "", "rfc3339"},
		{"devel with a stack level", []string{"--zap-devel", "--zap-stacktrace-level=panic"}, env(), "panic", "rfc3339"},
		{"flags", []string{"--zap-stacktrace-level=info", "--zap-time-encoding=epoch"}, env(), "info", "epoch"},
		{"environment", nil, env("OPERATOR_ZAP_STACKTRACE_LEVEL", "panic", "OPERATOR_ZAP_TIME_ENCODING", "millis"), "panic", "millis"},
		{"flag wins over environment", []string{"--zap-time-encoding=iso8601"}, env("OPERATOR_ZAP_TIME_ENCODING", "nano"), "error", "iso8601"},
		{"controller-runtime's other spellings", []string{"--zap-stacktrace-level=Error", "--zap-time-encoding=nanos"}, env(), "Error", "nanos"},
		{"rfc3339nano", []string{"--zap-time-encoding=rfc3339nano"}, env(), "error", "rfc3339nano"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Parse(tt.args, tt.env)
			require.NoError(t, err)
			assert.Equal(t, tt.stack, c.ZapStacktraceLevel, "stacktrace level")
			assert.Equal(t, tt.times, c.ZapTimeEncoding, "time encoding")
		})
	}
}
