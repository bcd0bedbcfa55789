package app_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/hexagonal-operator/operator/internal/adapters/cache"
	"github.com/hexagonal-operator/operator/internal/adapters/controller"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/ports"
)

var (
	secrets      = corev1.SchemeGroupVersion.WithResource("secrets")
	configMaps   = corev1.SchemeGroupVersion.WithResource("configmaps")
	pods         = corev1.SchemeGroupVersion.WithResource("pods")
	replicaSets  = appsv1.SchemeGroupVersion.WithResource("replicasets")
	clusterRoles = rbacv1.SchemeGroupVersion.WithResource("clusterroles")
)

// got is what a reconciler constructor was given.
type got struct {
	secrets ports.Reader[*corev1.Secret]
	writer  ports.Writer[*corev1.Secret]
	events  ports.EventRecorder
	clock   ports.Clock
}

// secretReconciler is a domain constructor as a reader writes one: ports
// in, a ports.Reconciler and an error out.
func secretReconciler(into *got) func(ports.Reader[*corev1.Secret], ports.Writer[*corev1.Secret], ports.EventRecorder, ports.Clock) (ports.Reconciler, error) {
	return func(r ports.Reader[*corev1.Secret], w ports.Writer[*corev1.Secret], e ports.EventRecorder, c ports.Clock) (ports.Reconciler, error) {
		*into = got{secrets: r, writer: w, events: e, clock: c}
		return noop{}, nil
	}
}

type noop struct{}

func (noop) Reconcile(context.Context, ports.Request) (ports.Result, error) {
	return ports.Result{}, nil
}

func newNoop(ports.Reader[*rbacv1.ClusterRole]) *noop { return &noop{} }

func newMetadataNoop(ports.Reader[*metav1.PartialObjectMetadata]) *noop { return &noop{} }

// Extra controllers join the graph whatever --controllers selects.
func TestControllersJoinTheGraph(t *testing.T) {
	t.Parallel()
	var into got
	extra := fx.Options(
		app.Controller("secrets", secretReconciler(&into), app.For[*corev1.Secret](secrets, app.Writes(app.Update)), app.Workers(2)),
		app.Controller("roles", newNoop, app.For[*rbacv1.ClusterRole](clusterRoles)),
		// The same kind again: each controller has its own ports for it.
		app.Controller("secrets-too", secretReconciler(&into), app.For[*corev1.Secret](secrets, app.Writes(app.Update))),
	)
	for _, args := range [][]string{
		{"--kubeconfig=testdata/kubeconfig"},
		{"--kubeconfig=testdata/kubeconfig", "--controllers=replicaset", "--leader-elect"},
		{"--kubeconfig=testdata/kubeconfig", "--controllers=", "--namespace=team"},
	} {
		require.NoError(t, fx.ValidateApp(app.Options(parse(t, args...)), extra), "%v", args)
	}
}

// The reconciler gets the For kind's ports from the cache and the kube
// writer, and the operator's shared ports; the controller joins the group
// the controller module runs.
func TestControllerWiresItsPorts(t *testing.T) {
	t.Parallel()
	var into got
	var names []string
	a := fx.New(
		app.Options(parse(t, "--kubeconfig=testdata/kubeconfig", "--controllers=replicaset")),
		app.Controller("secrets", secretReconciler(&into), app.For[*corev1.Secret](secrets, app.Writes(app.Update))),
		fx.Invoke(fx.Annotate(func(cs []*controller.Controller) {
			for _, c := range cs {
				names = append(names, c.Name())
			}
		}, fx.ParamTags(controller.GroupControllers))),
		fx.NopLogger,
	)
	require.NoError(t, a.Err())

	assert.ElementsMatch(t, []string{"replicaset", "secrets"}, names)
	assert.IsType(t, &cache.Resource[*corev1.Secret]{}, into.secrets)
	assert.NotNil(t, into.writer, "the kube writer, allowing the declared writes")
	assert.NotNil(t, into.events)
	assert.NotNil(t, into.clock)
}

// The For kind's ports belong to its controller: the rest of the graph
// does not see them, so two controllers never clash over them.
func TestForPortsArePrivate(t *testing.T) {
	t.Parallel()
	var into got
	err := fx.ValidateApp(
		app.Options(parse(t, "--kubeconfig=testdata/kubeconfig")),
		app.Controller("secrets", secretReconciler(&into), app.For[*corev1.Secret](secrets, app.Writes(app.Update))),
		fx.Invoke(func(ports.Writer[*corev1.Secret]) {}),
	)
	assert.ErrorContains(t, err, "missing type: ports.Writer[*k8s.io/api/core/v1.Secret]")
}

func TestControllerDeclarationMistakes(t *testing.T) {
	t.Parallel()
	var into got
	tests := []struct {
		name  string
		opt   fx.Option
		wants []string
	}{
		{"no For", app.Controller("secrets", secretReconciler(&into)), []string{`controller "secrets"`, "For was not given"}},
		{
			"For twice",
			app.Controller("secrets", secretReconciler(&into), app.For[*corev1.Secret](secrets, app.Writes(app.Update)), app.For[*corev1.Secret](secrets, app.Writes(app.Update))),
			[]string{"For given more than once"},
		},
		{"no workers", app.Controller("secrets", secretReconciler(&into), app.For[*corev1.Secret](secrets, app.Writes(app.Update)), app.Workers(0)), []string{"workers must be at least 1, got 0"}},
		{"no name", app.Controller("", secretReconciler(&into), app.For[*corev1.Secret](secrets, app.Writes(app.Update))), []string{"name is empty"}},
		{"not a constructor", app.Controller("secrets", noop{}, app.For[*corev1.Secret](secrets, app.Writes(app.Update))), []string{"app_test.noop does not return a ports.Reconciler"}},
		{"no reconciler out", app.Controller("secrets", func() int { return 1 }, app.For[*corev1.Secret](secrets, app.Writes(app.Update))), []string{"func() int does not return a ports.Reconciler"}},
		{
			"two watches offer what the constructor asks for",
			app.Controller("labels", newMetadataNoop,
				app.For[*appsv1.ReplicaSet](replicaSets, app.MetadataOnly()),
				app.Owns[*corev1.Pod](pods, app.MetadataOnly())),
			[]string{`controller "labels"`, "ports.Reader[*k8s.io/apimachinery/pkg/apis/meta/v1.PartialObjectMetadata], which 2 watches offer (For replicasets.apps, Owns pods)", "app.WatchOnly()"},
		},
		{
			"metadata-only as a type",
			app.Controller("secrets", secretReconciler(&into), app.For[*metav1.PartialObjectMetadata](secrets)),
			[]string{"For secrets: T is the kind's Go type; app.MetadataOnly() caches its metadata only"},
		},
		{
			"Watches without a map function",
			app.Controller("secrets", secretReconciler(&into), app.For[*corev1.Secret](secrets, app.Writes(app.Update)), app.Watches[*corev1.ConfigMap](configMaps, nil)),
			[]string{"Watches configmaps: the map function is nil"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := fx.ValidateApp(app.Options(parse(t, "--kubeconfig=testdata/kubeconfig")), tt.opt)
			require.Error(t, err)
			for _, want := range tt.wants {
				assert.ErrorContains(t, err, want)
			}
		})
	}
}

// WatchOnly takes a watch's ports out of the offer: the constructor gets
// the For kind's reader, and the operator's own controllers declare Pods so.
func TestWatchOnlyLeavesTheReaderToTheOtherWatch(t *testing.T) {
	t.Parallel()
	var got []app.Watched
	a := fx.New(
		app.Options(parse(t, "--kubeconfig=testdata/kubeconfig", "--controllers=")),
		app.Controller("labels", newMetadataNoop,
			app.For[*appsv1.ReplicaSet](replicaSets, app.MetadataOnly()),
			app.Owns[*corev1.Pod](pods, app.MetadataOnly(), app.Trim(cache.WithoutLabels, cache.WithoutAnnotations), app.WatchOnly())),
		recordSources(&got),
		invokeControllers(),
		fx.NopLogger,
	)
	require.NoError(t, a.Err())
	require.Len(t, got, 2)
	assert.Equal(t, "ReplicaSet", got[0].Source.GroupKind().Kind)
	assert.Equal(t, "Pod", got[1].Source.GroupKind().Kind)
}

// Every controller's watches pass through app.Sources, the seam tests
// decorate; the operator's two controllers watch Pods apart (every Pod's
// metadata for the replicaset controller, the ChaosPods' Pods typed and
// trimmed for the chaospod one), and a third controller that wanted every
// Pod in another form is refused rather than served a third informer.
func TestSourcesSeesEveryWatchAndPodsAreCachedTwiceAtMost(t *testing.T) {
	t.Parallel()
	var got []app.Watched
	a := fx.New(
		app.Options(parse(t, "--kubeconfig=testdata/kubeconfig")),
		recordSources(&got),
		invokeControllers(),
		fx.NopLogger,
	)
	require.NoError(t, a.Err())
	var watched []string
	for _, w := range got {
		watched = append(watched, w.Controller+" "+w.Resource.Resource+" "+w.Source.GroupKind().String())
	}
	assert.ElementsMatch(t, []string{
		"replicaset replicasets ReplicaSet.apps", "replicaset pods Pod",
		"chaospod chaospods ChaosPod.chaosapps.metamagical.io", "chaospod pods Pod",
	}, watched)

	b := fx.New(
		app.Options(parse(t, "--kubeconfig=testdata/kubeconfig")),
		app.Controller("pods", newMetadataNoop,
			app.For[*corev1.Secret](secrets, app.WatchOnly()),
			app.Owns[*corev1.Pod](pods, app.MetadataOnly())),
		invokeControllers(),
		fx.NopLogger,
	)
	require.ErrorContains(t, b.Err(), "kind Pod is already cached as metadata without labels without annotations")
}

func recordSources(into *[]app.Watched) fx.Option {
	var mu sync.Mutex
	return fx.Decorate(func(next app.Sources) app.Sources {
		return func(w app.Watched) controller.Source {
			mu.Lock()
			defer mu.Unlock()
			*into = append(*into, w)
			return next(w)
		}
	})
}

func invokeControllers() fx.Option {
	return fx.Invoke(fx.Annotate(func([]*controller.Controller) {}, fx.ParamTags(controller.GroupControllers)))
}

// A controller added from outside has its cache's, its writes' and its
// Events' requests checked at start-up, like the operator's own, granted
// by manager-role.
func TestControllerJoinsThePermissionCheck(t *testing.T) {
	t.Parallel()
	var into got
	wants, err := app.RequiredAccess(parse(t, "--controllers=", "--namespace=team", "--metrics-secure=false"),
		app.Controller("secrets", secretReconciler(&into), app.For[*corev1.Secret](secrets, app.Writes(app.Update)),
			app.Owns[*corev1.ConfigMap](configMaps),
			app.Watches[*corev1.Pod](pods, func(metav1.Object) []ports.Request { return nil }, app.MetadataOnly())))
	require.NoError(t, err)
	var got []string
	for _, x := range wants {
		if x.Resource == "chaospods" {
			continue // the operator's Pod validator's, which serves whatever the controllers
		}
		assert.Equal(t, "ClusterRole manager-role in config/rbac/role.yaml", x.GrantedBy)
		got = append(got, x.Verb+" "+x.Group+"/"+x.Resource+" in "+x.Namespace)
	}
	assert.ElementsMatch(t, []string{
		"list /secrets in team",
		"watch /secrets in team",
		"update /secrets in team",
		"list /configmaps in team",
		"watch /configmaps in team",
		"list /pods in team",
		"watch /pods in team",
		"create events.k8s.io/events in team",
		"patch events.k8s.io/events in team",
	}, got)
}

// A selected watch has an informer of its own, shared with any watch of
// the same kind and selector, and refused to one that caches them
// otherwise; its trims reach the cache, and its selector the role's
// reason.
func TestSelectorAndTrimShapeTheCache(t *testing.T) {
	t.Parallel()
	chosen, err := labels.Parse("chosen")
	require.NoError(t, err)
	noSpec := cache.TrimOf("without spec", func(p *corev1.Pod) { p.Spec = corev1.PodSpec{} })
	var readers []ports.Reader[*corev1.Pod]
	newPodReader := func(r ports.Reader[*corev1.Pod]) *noop {
		readers = append(readers, r)
		return &noop{}
	}
	watchPods := func(name string, opts ...app.WatchOption) fx.Option {
		return app.Controller(name, newPodReader, app.For[*corev1.Secret](secrets, app.WatchOnly()), app.Owns[*corev1.Pod](pods, opts...))
	}
	var got []app.Watched
	a := fx.New(
		app.Options(parse(t, "--kubeconfig=testdata/kubeconfig", "--controllers=")),
		watchPods("chosen", app.Selector(chosen), app.Trim(noSpec)),
		watchPods("chosen-too", app.Selector(chosen), app.Trim(noSpec)),
		watchPods("everyone"),
		recordSources(&got),
		invokeControllers(),
		fx.NopLogger,
	)
	require.NoError(t, a.Err(), "another selector, another informer")
	assert.Len(t, readers, 3)
	assert.Len(t, got, 6)

	b := fx.New(
		app.Options(parse(t, "--kubeconfig=testdata/kubeconfig", "--controllers=")),
		watchPods("chosen", app.Selector(chosen), app.Trim(noSpec)),
		watchPods("untrimmed", app.Selector(chosen)),
		invokeControllers(),
		fx.NopLogger,
	)
	require.ErrorContains(t, b.Err(), "kind Pod[chosen] is already cached as typed without spec")

	c := fx.New(
		app.Options(parse(t, "--kubeconfig=testdata/kubeconfig", "--controllers=")),
		watchPods("mistyped", app.Trim(cache.TrimOf("without data", func(cm *corev1.ConfigMap) { cm.Data = nil }))),
		invokeControllers(),
		fx.NopLogger,
	)
	require.ErrorContains(t, c.Err(), `trim "without data" is for *v1.ConfigMap, not *v1.Pod`)

	files, err := app.Manifests("test", parse(t, "--controllers=", "--metrics-secure=false"), watchPods("chosen", app.Selector(chosen), app.Trim(noSpec)))
	require.NoError(t, err)
	var role string
	for _, f := range files {
		if f.Path == "rbac/role.yaml" {
			role = string(f.Content)
		}
	}
	assert.Contains(t, role, "# controller chosen: Owns Pod, cached, selected by chosen\n", "RBAC cannot select: the role says why it grants every Pod")
}
