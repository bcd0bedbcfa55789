// Command crbaseline is the operator's behaviour written the way a
// kubebuilder user writes it, on controller-runtime at its default options.
// The benchmark driver (bench/, --ab) runs it beside the operator binary so
// that figures can be read against the framework the operator replaces. It is
// not part of the operator and is never shipped.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
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

// settings are what the command line asks for.
type settings struct {
	metricsAddr          string
	probeAddr            string
	pprofAddr            string
	secureMetrics        bool
	enableHTTP2          bool
	enableLeaderElection bool
	leaderElectionID     string
	webhookPort          int
	webhookCertDir       string
	controllers          []string
	mode                 mode
	zap                  zap.Options
}

func main() {
	s, err := parseFlags(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&s.zap)))

	cfg := ctrl.GetConfigOrDie()
	s.mode.configureClient(cfg)
	s.mode.configureGC()
	opts, objects := managerOptions(s)
	mgr, err := newManager(cfg, opts, objects, s)
	if err != nil {
		setupLog.Error(err, "unable to set up manager")
		os.Exit(1)
	}

	setupLog.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "problem running manager")
		os.Exit(1)
	}
}

// parseFlags reads args with fs, on which controller-runtime's --kubeconfig
// may already be registered (flag.CommandLine's is).
func parseFlags(fs *flag.FlagSet, args []string) (settings, error) {
	var (
		s                   settings
		controllers         string
		tuned, expert, prio bool
	)
	fs.StringVar(&s.metricsAddr, "metrics-bind-address", ":8443", "The address the metrics endpoint binds to; 0 disables it.")
	fs.StringVar(&s.probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	fs.StringVar(&s.pprofAddr, "pprof-bind-address", "", "The address net/http/pprof binds to, for profiling it as the operator is profiled; empty disables it.")
	fs.BoolVar(&s.secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS with authentication and authorization; false serves plain HTTP.")
	fs.BoolVar(&s.enableHTTP2, "enable-http2", false, "Enable HTTP/2 for the metrics and webhook servers.")
	fs.BoolVar(&s.enableLeaderElection, "leader-elect", false, "Enable leader election for the controllers.")
	fs.StringVar(&s.leaderElectionID, "leader-election-id", "crbaseline-leader", "The name of the leader election Lease.")
	fs.IntVar(&s.webhookPort, "webhook-port", 9443, "The port the webhook server listens on.")
	fs.StringVar(&s.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "The folder holding tls.crt and tls.key for the webhook server.")
	fs.StringVar(&controllers, "controllers", controllerReplicaSet+","+controllerChaosPod, "Comma-separated controllers to run (replicaset, chaospod); webhooks always serve.")
	fs.BoolVar(&tuned, "tuned", false, "Configure controller-runtime with the options an experienced user picks first (see tuned.go) instead of at its defaults.")
	fs.BoolVar(&expert, "expert", false, "Configure controller-runtime with everything the operator does that it offers (see tuned.go) instead of at its defaults.")
	fs.BoolVar(&prio, "priority-queue", true, "With --expert: run the controllers on controller-runtime's priority queue; false runs them on the plain FIFO work queue.")
	s.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return settings{}, err
	}

	var err error
	if s.controllers, err = parseControllers(controllers); err != nil {
		return settings{}, fmt.Errorf("invalid value for --controllers: %w", err)
	}
	prioSet := false
	fs.Visit(func(f *flag.Flag) { prioSet = prioSet || f.Name == "priority-queue" })
	if prioSet && !expert {
		return settings{}, errors.New("--priority-queue needs --expert")
	}
	if s.mode, err = newMode(tuned, expert, prio); err != nil {
		return settings{}, err
	}
	return s, nil
}

// managerOptions are the manager's options in s's mode, with
// operator_cache_objects counting the informers of the cache they
// configure (newManager registers it).
func managerOptions(s settings) (ctrl.Options, *cacheObjects) {
	// HTTP/2 stays off unless asked for (CVE-2023-44487, rapid reset), as
	// the kubebuilder scaffold does.
	var tlsOpts []func(*tls.Config)
	if !s.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	metricsOptions := metricsserver.Options{
		BindAddress:   s.metricsAddr,
		SecureServing: s.secureMetrics,
		TLSOpts:       tlsOpts,
	}
	if s.secureMetrics {
		metricsOptions.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	objects := newCacheObjects(scheme)
	cacheOptions := s.mode.cache
	cacheOptions.NewInformer = objects.newInformer
	return ctrl.Options{
		Cache:                  cacheOptions,
		Controller:             config.Controller{UsePriorityQueue: s.mode.usePriorityQueue},
		Scheme:                 scheme,
		Metrics:                metricsOptions,
		HealthProbeBindAddress: s.probeAddr,
		PprofBindAddress:       s.pprofAddr,
		WebhookServer: webhook.NewServer(webhook.Options{
			Port:    s.webhookPort,
			CertDir: s.webhookCertDir,
			TLSOpts: tlsOpts,
		}),
		LeaderElection:   s.enableLeaderElection,
		LeaderElectionID: s.leaderElectionID,
	}, objects
}

// newManager is the manager of opts with s's controllers, the webhooks,
// the health checks, and objects registered in controller-runtime's
// metrics registry.
func newManager(cfg *rest.Config, opts ctrl.Options, objects *cacheObjects, s settings) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	m := s.mode

	// The objects whose caches /readyz waits for.
	var watched []client.Object
	if slices.Contains(s.controllers, controllerReplicaSet) {
		if err := (&ReplicaSetReconciler{
			Client:           mgr.GetClient(),
			Recorder:         mgr.GetEventRecorder("replicaset-controller"),
			MetadataOnlyPods: m.metadataOnlyPods,
			MetadataOnly:     m.metadataOnlyRS,
			SkipLabeled:      m.skipLabeled,
			Workers:          m.replicaSetWorkers,
		}).SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("create controller %s: %w", controllerReplicaSet, err)
		}
		watched = append(watched, m.replicaSet(), m.pod())
	}
	if slices.Contains(s.controllers, controllerChaosPod) {
		if err := (&ChaosPodReconciler{
			Client:           mgr.GetClient(),
			Recorder:         mgr.GetEventRecorder("chaospod-controller"),
			MetadataOnlyPods: m.metadataOnlyPods,
			Workers:          m.chaosPodWorkers,
		}).SetupWithManager(mgr); err != nil {
			return nil, fmt.Errorf("create controller %s: %w", controllerChaosPod, err)
		}
		watched = append(watched, &chaosv1.ChaosPod{}, m.pod())
	}

	if err := setupPodWebhooks(mgr, m.rawPodMutator); err != nil {
		return nil, fmt.Errorf("create Pod webhooks: %w", err)
	}
	if err := setupChaosPodWebhooks(mgr); err != nil {
		return nil, fmt.Errorf("create ChaosPod webhooks: %w", err)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("set up health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return nil, fmt.Errorf("set up ready check: %w", err)
	}
	if err := mgr.AddReadyzCheck("informers", informersSynced(mgr.GetCache(), watched)); err != nil {
		return nil, fmt.Errorf("set up ready check: %w", err)
	}
	if err := metrics.Registry.Register(objects); err != nil {
		return nil, fmt.Errorf("register operator_cache_objects: %w", err)
	}
	return mgr, nil
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
