package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// env is what every workload runs against: one control plane for the whole
// invocation (so A/B runs meet the same API server), the operator's webhook
// address and certificate, and unthrottled admin clients for the load. The
// scale workload alone runs each turn on a control plane of its own,
// restored from the objects it created once (see restored).
type env struct {
	cp *controlplane.ControlPlane
	// cs and dyn are the load generator's clients: QPS -1, so what is
	// measured is the operator and the API server, not a token bucket.
	cs  kubernetes.Interface
	dyn dynamic.Interface
	// meta lists metadata only, as an operator's metadata cache does.
	meta metadata.Interface
	// webhook is the address every operator process serves webhooks on; the
	// webhook configurations and the CRD's conversion stanza point there,
	// so it stays the same across operator restarts.
	webhook string
	certDir string
	// ca signed the webhook serving certificate in certDir: the first
	// control plane's, which every webhook configuration trusts.
	ca []byte
	// root is the repository, whose config/ the control planes install.
	root string
	// dir holds operator logs; removed at exit.
	dir  string
	opts options
	seq  *int // makes namespace and log names unique across runs
	// seeds are the scale workload's objects, created once per size.
	seeds map[scaleSize]scaleSeed
}

// startEnv starts the control plane, issues the webhook serving certificate
// and installs the CRD and the webhook configurations from config/.
func startEnv(ctx context.Context, opts options) (*env, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("find the repository (run from inside it): %w", err)
	}
	dir, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return nil, fmt.Errorf("create work folder: %w", err)
	}
	e := &env{root: root, dir: dir, certDir: filepath.Join(dir, "certs"), opts: opts, seq: new(int), seeds: map[scaleSize]scaleSeed{}}
	ok := false
	defer func() {
		if !ok {
			e.stop()
		}
	}()

	began := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		return nil, err
	}
	if err := e.connect(cp); err != nil {
		return nil, err
	}
	logf("control plane ready at %s in %s", e.cp.Config.Host, time.Since(began).Round(100*time.Millisecond))

	port, err := controlplane.StablePort()
	if err != nil {
		return nil, err
	}
	e.webhook = "127.0.0.1:" + strconv.Itoa(port)
	if _, err := e.cp.IssueServingCert(e.certDir); err != nil {
		return nil, fmt.Errorf("issue webhook serving certificate: %w", err)
	}
	e.ca = e.cp.CACert()
	if err := e.install(ctx); err != nil {
		return nil, err
	}
	ok = true
	return e, nil
}

// connect makes cp the control plane e's clients talk to.
func (e *env) connect(cp *controlplane.ControlPlane) error {
	e.cp = cp
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1
	var err error
	if e.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("build clientset: %w", err)
	}
	if e.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return fmt.Errorf("build dynamic client: %w", err)
	}
	if e.meta, err = metadata.NewForConfig(cfg); err != nil {
		return fmt.Errorf("build metadata client: %w", err)
	}
	return nil
}

// install creates the CRD and the webhook configurations from config/ in
// e's control plane, pointing at e.webhook and trusting e.ca.
func (e *env) install(ctx context.Context) error {
	server := controlplane.WebhookServer{Host: e.webhook, CABundle: e.ca}
	if _, err := e.cp.InstallCRDs(ctx, filepath.Join(e.root, "config", "crd"), &server); err != nil {
		return err
	}
	// From config/default, so the configurations carry their deployed names.
	if _, err := e.cp.InstallWebhooks(ctx, filepath.Join(e.root, "config", "default"), server); err != nil {
		return err
	}
	return nil
}

// on is e with cp as its control plane: a control plane of the scale
// workload's, which its caller stops. Everything else (webhook address and
// certificate, options, work folder, names) is e's.
func (e *env) on(cp *controlplane.ControlPlane) (*env, error) {
	o := *e
	if err := o.connect(cp); err != nil {
		return nil, err
	}
	return &o, nil
}

// stop stops the control plane and removes the work folder.
func (e *env) stop() {
	if e.cp != nil {
		if err := e.cp.Stop(); err != nil {
			logf("stop control plane: %v", err)
		}
	}
	_ = os.RemoveAll(e.dir)
}

// namespace creates a fresh namespace for one run of a workload.
func (e *env) namespace(ctx context.Context, workload, label string) (string, error) {
	*e.seq++
	name := fmt.Sprintf("bench-%s-%d", workload, *e.seq)
	if label != "" {
		name = fmt.Sprintf("bench-%s-%s-%d", workload, strings.ToLower(label), *e.seq)
	}
	if err := e.cp.EnsureNamespace(ctx, name); err != nil {
		return "", err
	}
	return name, nil
}

// deleteNamespace removes everything a workload created in ns, then ns.
// There is no kube-controller-manager, so neither the namespace controller
// nor the garbage collector runs: the objects are deleted here, and the
// namespace's "kubernetes" finalizer is removed by hand, as the namespace
// controller would once it is empty. The next operator process caches
// every namespace, so leftovers would skew its figures.
func (e *env) deleteNamespace(ctx context.Context, ns string) error {
	// A cleanup must run even when the run was interrupted; the scale
	// workload leaves tens of thousands of objects to delete.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	all := metav1.ListOptions{}
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	pods, rss, events := e.cs.CoreV1().Pods(ns), e.cs.AppsV1().ReplicaSets(ns), e.cs.CoreV1().Events(ns)
	errs := []error{
		ignoreNotFound(e.dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns).DeleteCollection(ctx, now, all)),
		purge(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
			func(ctx context.Context, name string) error { return pods.Delete(ctx, name, now) }),
		purge(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return rss.List(ctx, o) },
			func(ctx context.Context, name string) error { return rss.Delete(ctx, name, now) }),
		purge(ctx, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return events.List(ctx, o) },
			func(ctx context.Context, name string) error { return events.Delete(ctx, name, now) }),
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clean namespace %s: %w", ns, err)
	}
	if err := ignoreNotFound(e.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})); err != nil {
		return fmt.Errorf("delete namespace %s: %w", ns, err)
	}
	obj, err := e.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", ns, err)
	}
	obj.Spec.Finalizers = []corev1.FinalizerName{}
	if _, err := e.cs.CoreV1().Namespaces().Finalize(ctx, obj, metav1.UpdateOptions{}); ignoreNotFound(err) != nil {
		return fmt.Errorf("finalize namespace %s: %w", ns, err)
	}
	return nil
}

// purge deletes every object list names, one DELETE each at c=32. A
// DeleteCollection of tens of thousands of objects is one request, which
// the API server, deleting them one after another, may time out.
func purge(ctx context.Context, list func(context.Context, metav1.ListOptions) (runtime.Object, error), del func(context.Context, string) error) error {
	var names []string
	opts := metav1.ListOptions{Limit: listPage}
	for {
		page, err := list(ctx, opts)
		if err != nil {
			return ignoreNotFound(err)
		}
		items, err := meta.ExtractList(page)
		if err != nil {
			return err
		}
		for _, item := range items {
			obj, err := meta.Accessor(item)
			if err != nil {
				return err
			}
			names = append(names, obj.GetName())
		}
		paged, err := meta.ListAccessor(page)
		if err != nil {
			return err
		}
		if opts.Continue = paged.GetContinue(); opts.Continue == "" {
			break
		}
	}
	return parallel(ctx, len(names), 32, func(ctx context.Context, i int) error {
		if err := ignoreNotFound(del(ctx, names[i])); err != nil {
			return fmt.Errorf("delete %s: %w", names[i], err)
		}
		return nil
	})
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// logf reports progress on stderr; stdout carries only the figures.
func logf(format string, args ...any) {
	fmt.Fprint(os.Stderr, relative("bench: "+fmt.Sprintf(format, args...)+"\n"))
}

// relative writes the paths of s below the working directory relative to
// it: a run's log is committed with its table (bench/results/), and should
// not name the folder of the checkout it ran in.
func relative(s string) string { return relativeTo(workingDir(), s) }

// relativeTo writes the paths of s below dir relative to it; s as it is
// when dir is empty.
func relativeTo(dir, s string) string {
	if dir == "" {
		return s
	}
	return strings.ReplaceAll(s, dir+string(os.PathSeparator), "")
}

// workingDir is the driver's working directory, read once: the driver
// never changes it. Empty when unknown or the root, where every path is
// below it.
var workingDir = sync.OnceValue(func() string {
	wd, err := os.Getwd()
	if err != nil || wd == "/" {
		return ""
	}
	return wd
})

// scratch creates a namespace for one run and returns a cleanup that
// deletes it; the cleanup may be called early and again from a defer.
func (e *env) scratch(ctx context.Context, workload, label string) (string, func() error, error) {
	ns, err := e.namespace(ctx, workload, label)
	if err != nil {
		return "", nil, err
	}
	var once sync.Once
	var cleanErr error
	return ns, func() error {
		once.Do(func() { cleanErr = e.deleteNamespace(ctx, ns) })
		return cleanErr
	}, nil
}
