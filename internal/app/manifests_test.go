package app_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/ports"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

// configDir is config/, seen from this package's folder.
var configDir = filepath.Join("..", "..", "config")

// managerConfig is the configuration config/manager runs the operator
// with, in kustomize's base names: its container's arguments and
// environment, the namespace being the base's "system".
func managerConfig(t *testing.T) config.Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(configDir, "manager", "manager.yaml"))
	require.NoError(t, err)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	env := map[string]string{"POD_NAMESPACE": "system"}
	var args []string
	for {
		var d appsv1.Deployment
		if err := dec.Decode(&d); err != nil {
			break
		}
		if d.Kind != "Deployment" {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name != "manager" {
				continue
			}
			args = c.Args
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					env[e.Name] = e.Value
				}
			}
		}
	}
	require.NotEmpty(t, args, "config/manager's manager container has arguments")
	cfg, err := config.Parse(args, func(k string) string { return env[k] })
	require.NoError(t, err)
	return cfg
}

// config/ holds exactly what `operator manifests` renders for the
// configuration config/manager runs: each generated file as rendered, and
// no generated file the wiring no longer renders.
func TestConfigIsWhatTheWiringNeeds(t *testing.T) {
	t.Parallel()
	files := operatortest.RequireRendered(t, "operator", configDir, managerConfig(t), fx.Options())
	paths := map[string]bool{}
	for _, f := range files {
		paths[f.Path] = true
	}
	assert.True(t, paths["rbac/role.yaml"] && paths["webhook/manifests.yaml"], "the operator's roles and webhooks are rendered")
}

// Every rendered document is a valid object of its kind, strictly decoded:
// a role's rules as the API server reads them, each bound to the
// ServiceAccount.
func TestRenderedRolesAreStrictAndBound(t *testing.T) {
	t.Parallel()
	files, err := app.Manifests("operator", managerConfig(t))
	require.NoError(t, err)
	roles, bindings := 0, map[string]bool{}
	for _, f := range files {
		if !strings.HasPrefix(f.Path, "rbac/") {
			continue
		}
		for doc := range strings.SplitSeq(string(f.Content), "\n---\n") {
			var head struct{ Kind string }
			require.NoError(t, yaml.Unmarshal([]byte(doc), &head), f.Path)
			switch head.Kind {
			case "Role", "ClusterRole":
				var r rbacv1.ClusterRole
				require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &r), f.Path)
				assert.NotEmpty(t, r.Rules, "%s %s", f.Path, r.Name)
				roles++
			case "RoleBinding", "ClusterRoleBinding":
				var b rbacv1.ClusterRoleBinding
				require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &b), f.Path)
				assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: app.ServiceAccountName, Namespace: "system"}}, b.Subjects)
				bindings[b.RoleRef.Kind+"/"+b.RoleRef.Name] = true
			default:
				t.Fatalf("%s: unexpected kind %q", f.Path, head.Kind)
			}
		}
	}
	assert.Equal(t, roles, len(bindings), "each role has its binding")
}

// What a controller declares is what its role grants: its watches' list
// and watch, its writes' verbs, the owner's finalizers when it creates
// what it owns, its Events; and the writer it is given refuses a write
// that was not declared.
func TestControllerPermissionsFollowTheDeclaration(t *testing.T) {
	t.Parallel()
	configMaps := corev1.SchemeGroupVersion.WithResource("configmaps")
	secrets := corev1.SchemeGroupVersion.WithResource("secrets")
	reads := func() (ports.Reconciler, error) { return &noop{}, nil }
	records := func(ports.EventRecorder) (ports.Reconciler, error) { return &noop{}, nil }
	writesConfigMaps := func(ports.Writer[*corev1.ConfigMap]) (ports.Reconciler, error) { return &noop{}, nil }
	writesSecrets := func(ports.Writer[*corev1.Secret]) (ports.Reconciler, error) { return &noop{}, nil }
	tests := []struct {
		name  string
		ctor  any
		watch []app.ControllerOption
		want  []string
		not   []string
	}{
		{
			name:  "reads only",
			ctor:  reads,
			watch: []app.ControllerOption{app.For[*corev1.Secret](secrets, app.WatchOnly())},
			want:  []string{`list secrets in namespace "team"`, `watch secrets in namespace "team"`},
			not:   []string{"create secrets", "update secrets", "finalizers", "events"},
		},
		{
			name:  "records Events",
			ctor:  records,
			watch: []app.ControllerOption{app.For[*corev1.Secret](secrets, app.WatchOnly())},
			want:  []string{`create events.k8s.io/events in namespace "team"`, `patch events.k8s.io/events in namespace "team"`},
		},
		{
			name: "For and Owns of one kind, the owned ones created and updated",
			ctor: writesConfigMaps,
			watch: []app.ControllerOption{
				app.For[*corev1.ConfigMap](configMaps, app.WatchOnly()),
				app.Owns[*corev1.ConfigMap](configMaps, app.Writes(app.Create, app.Update)),
			},
			want: []string{`create configmaps in namespace "team"`, `update configmaps in namespace "team"`, `update configmaps/finalizers in namespace "team"`},
			not:  []string{"delete configmaps", "patch configmaps", "configmaps/status", "events"},
		},
		{
			name: "For and Owns of one kind, written through the For watch's writer",
			ctor: writesConfigMaps,
			watch: []app.ControllerOption{
				app.For[*corev1.ConfigMap](configMaps, app.Writes(app.Create, app.Delete)),
				app.Owns[*corev1.ConfigMap](configMaps, app.WatchOnly()),
			},
			want: []string{`create configmaps in namespace "team"`, `delete configmaps in namespace "team"`, `update configmaps/finalizers in namespace "team"`},
			not:  []string{"update configmaps in", "patch configmaps"},
		},
		{
			name:  "status and metadata",
			ctor:  writesSecrets,
			watch: []app.ControllerOption{app.For[*corev1.Secret](secrets, app.Writes(app.UpdateStatus, app.PatchMetadata, app.Delete))},
			want:  []string{`update secrets/status in namespace "team"`, `patch secrets in namespace "team"`, `delete secrets in namespace "team"`},
			not:   []string{"create secrets", "update secrets in", "finalizers"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wants, err := app.RequiredAccess(parse(t, "--controllers=", "--namespace=team", "--metrics-secure=false"), app.Controller("mine", tt.ctor, tt.watch...))
			require.NoError(t, err)
			var got []string
			for _, a := range wants {
				assert.Equal(t, "ClusterRole manager-role in config/rbac/role.yaml", a.GrantedBy, "%s", a)
				got = append(got, a.String())
			}
			all := strings.Join(got, "\n")
			for _, w := range tt.want {
				assert.Contains(t, all, w)
			}
			for _, n := range tt.not {
				assert.NotContains(t, all, n)
			}
		})
	}
}

// The writer a reconciler gets makes only the writes its watch declares;
// another is refused, terminal, naming the declaration to change.
func TestUndeclaredWritesAreRefused(t *testing.T) {
	t.Parallel()
	configMaps := corev1.SchemeGroupVersion.WithResource("configmaps")
	var w ports.Writer[*corev1.ConfigMap]
	capture := func(cw ports.Writer[*corev1.ConfigMap]) (ports.Reconciler, error) {
		w = cw
		return &noop{}, nil
	}
	a := fx.New(app.Options(parse(t, "--kubeconfig=testdata/kubeconfig", "--controllers=")), fx.NopLogger,
		app.Controller("mine", capture, app.For[*corev1.ConfigMap](configMaps, app.Writes(app.Create))))
	require.NoError(t, a.Err())
	require.NotNil(t, w, "the controller was built")
	ctx := t.Context()
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	for name, write := range map[string]func() error{
		"Update":        func() error { _, err := w.Update(ctx, &corev1.ConfigMap{}); return err },
		"UpdateStatus":  func() error { _, err := w.UpdateStatus(ctx, &corev1.ConfigMap{}); return err },
		"PatchMetadata": func() error { return w.PatchMetadata(ctx, key, ports.MetadataPatch{}) },
		"Delete":        func() error { return w.Delete(ctx, key, "") },
	} {
		err := write()
		require.Error(t, err, name)
		assert.True(t, ports.IsTerminal(err), "%s: %v", name, err)
		assert.Contains(t, err.Error(), name+" configmaps: not declared: add app."+name+" to the app.Writes of its watch", name)
	}
}
