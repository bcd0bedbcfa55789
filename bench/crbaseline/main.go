// Command crbaseline is the operator's behaviour written the way a
// kubebuilder user writes it, on controller-runtime at its default options.
// The benchmark driver (bench/, --ab) runs it beside the operator binary so
// that figures can be read against the framework the operator replaces. It is
// not part of the operator and is never shipped.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	chaosv1 "github.com/hexagonal-operator/operator/bench/crbaseline/api/v1"
	chaosv2 "github.com/hexagonal-operator/operator/bench/crbaseline/api/v2"
)

// The controllers --controllers may name.
const (
	controllerReplicaSet = "replicaset"
	controllerChaosPod   = "chaospod"
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(chaosv1.AddToScheme(scheme))
	utilruntime.Must(chaosv2.AddToScheme(scheme))
}

func main() {
	var (
		metricsAddr          string
		probeAddr            string
		pprofAddr            string
		secureMetrics        bool
		enableHTTP2          bool
		enableLeaderElection bool
		leaderElectionID     string
		webhookPort          int
		webhookCertDir       string
		controllers          string
		tuned                bool
		expert               bool
	)
	// --kubeconfig is registered by controller-runtime's config package.
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "The address the metrics endpoint binds to; 0 disables it.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "", "The address net/http/pprof binds to, for profiling it as the operator is profiled; empty disables it.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS with authentication and authorization; false serves plain HTTP.")
	flag.BoolVar(&enableHTTP2, "enable-http2", false, "Enable HTTP/2 for the metrics and webhook servers.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false, "Enable leader election for the controllers.")
	flag.StringVar(&leaderElectionID, "leader-election-id", "crbaseline-leader", "The name of the leader election Lease.")
	flag.IntVar(&webhookPort, "webhook-port", 9443, "The port the webhook server listens on.")
	flag.StringVar(&webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "The folder holding tls.crt and tls.key for the webhook server.")
	flag.StringVar(&controllers, "controllers", controllerReplicaSet+","+controllerChaosPod, "Comma-separated controllers to run (replicaset, chaospod); webhooks always serve.")
	flag.BoolVar(&tuned, "tuned", false, "Configure controller-runtime with the options an experienced user picks first (see tuned.go) instead of at its defaults.")
	flag.BoolVar(&expert, "expert", false, "Configure controller-runtime with everything the operator does that it offers (see tuned.go) instead of at its defaults.")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	enabled, err := parseControllers(controllers)
	if err != nil {
		fmt.Fprintf(os.Stderr, "invalid value for --controllers: %v\n", err)
		os.Exit(2)
	}
	if tuned && expert {
		fmt.Fprintln(os.Stderr, "--tuned and --expert exclude each other")
		os.Exit(2)
	}

	// HTTP/2 stays off unless asked for (CVE-2023-44487, rapid reset), as
	// the kubebuilder scaffold does.
	var tlsOpts []func(*tls.Config)
	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	metricsOptions := metricsserver.Options{
		BindAddress:   metricsAddr,
		SecureServing: secureMetrics,
		TLSOpts:       tlsOpts,
	}
	if secureMetrics {
		metricsOptions.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	cfg := ctrl.GetConfigOrDie()
	mode := defaultMode()
	switch {
	case tuned:
		mode = tunedMode()
	case expert:
		mode = expertMode()
	}
	mode.apply(cfg)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:                  mode.cache,
		Scheme:                 scheme,
		Metrics:                metricsOptions,
		HealthProbeBindAddress: probeAddr,
		PprofBindAddress:       pprofAddr,
		WebhookServer: webhook.NewServer(webhook.Options{
			Port:    webhookPort,
			CertDir: webhookCertDir,
			TLSOpts: tlsOpts,
		}),
		LeaderElection:   enableLeaderElection,
		LeaderElectionID: leaderElectionID,
	})
	if err != nil {
		setupLog.Error(err, "unable to create manager")
		os.Exit(1)
	}

	// The objects whose caches /readyz waits for.
	var watched []client.Object
	if slices.Contains(enabled, controllerReplicaSet) {
		if err := (&ReplicaSetReconciler{
			Client:           mgr.GetClient(),
			Recorder:         mgr.GetEventRecorder("replicaset-controller"),
			MetadataOnlyPods: mode.metadataOnlyPods,
			MetadataOnly:     mode.metadataOnlyRS,
			SkipLabeled:      mode.skipLabeled,
			Workers:          mode.replicaSetWorkers,
		}).SetupWithManager(mgr); err != nil {
			setupLog.Error(err, "unable to create controller", "controller", controllerReplicaSet)
			os.Exit(1)
		}
		watched = append(watched, mode.replicaSet(), mode.pod())
	}
	if slices.Contains(enabled, controllerChaosPod) {
		if err := (&ChaosPodReconciler{
			Client:           mgr.GetClient(),
			Recorder:         mgr.GetEventRecorder("chaospod-controller"),
			MetadataOnlyPods: mode.metadataOnlyPods,
			Workers:          mode.chaosPodWorkers,
		}).SetupWithManager(mgr); err != nil {
			setupLog.Error(err, "unable to create controller", "controller", controllerChaosPod)
			os.Exit(1)
		}
		watched = append(watched, &chaosv1.ChaosPod{}, mode.pod())
	}

	if err := setupPodWebhooks(mgr); err != nil {
		setupLog.Error(err, "unable to create webhook", "webhook", "Pod")
		os.Exit(1)
	}
	if err := setupChaosPodWebhooks(mgr); err != nil {
		setupLog.Error(err, "unable to create webhook", "webhook", "ChaosPod")
		os.Exit(1)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		setupLog.Error(err, "unable to set up ready check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("informers", informersSynced(mgr.GetCache(), watched)); err != nil {
		setupLog.Error(err, "unable to set up ready check")
		os.Exit(1)
	}

	setupLog.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}

// parseControllers splits the --controllers value and rejects unknown names.
func parseControllers(value string) ([]string, error) {
	var out []string
	for name := range strings.SplitSeq(value, ",") {
		name = strings.TrimSpace(name)
		switch name {
		case "":
			continue
		case controllerReplicaSet, controllerChaosPod:
			out = append(out, name)
		default:
			return nil, fmt.Errorf("unknown controller %q (known: %s, %s)", name, controllerReplicaSet, controllerChaosPod)
		}
	}
	return out, nil
}

// informersSynced is ready once the informer of every watched type has
// synced, so that /readyz means "caches synced" as the benchmark expects;
// controller-runtime has no such check of its own. BlockUntilSynced(false)
// keeps a probe from waiting on the list: it only looks.
func informersSynced(c cache.Cache, watched []client.Object) healthz.Checker {
	return func(req *http.Request) error {
		for _, obj := range watched {
			informer, err := c.GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
			if err != nil {
				return fmt.Errorf("get informer for %T: %w", obj, err)
			}
			if !informer.HasSynced() {
				return fmt.Errorf("informer for %T has not synced", obj)
			}
		}
		return nil
	}
}
