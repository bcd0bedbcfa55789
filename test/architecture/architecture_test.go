package architecture_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/test/architecture"
)

func TestModuleFollowsTheDependencyRule(t *testing.T) {
	t.Parallel()
	module, pkgs, err := architecture.Load("../..")
	require.NoError(t, err)
	require.NotEmpty(t, pkgs)
	for _, v := range architecture.Check(module, pkgs) {
		t.Errorf("VIOLATION %s", v)
	}
}

func TestGoModHasNoControllerRuntime(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	for _, banned := range []string{"sigs.k8s.io/controller-runtime", "k8s.io/kubernetes "} {
		assert.NotContains(t, string(data), banned)
	}
}

// The checker itself must fail on a module that breaks the rule.
func TestCheckCatchesAViolatingModule(t *testing.T) {
	t.Parallel()
	module, pkgs, err := architecture.Load("testdata/violating")
	require.NoError(t, err)
	var got []string
	for _, v := range architecture.Check(module, pkgs) {
		got = append(got, v.Package+" -> "+v.Import)
	}
	assert.ElementsMatch(t, []string{
		"example.com/violating/internal/domain/rules -> net/http",
		"example.com/violating/internal/domain/rules -> example.com/violating/internal/adapters/one",
		"example.com/violating/internal/adapters/one -> example.com/violating/internal/adapters/two",
	}, got)
}

func TestCheckRules(t *testing.T) {
	t.Parallel()
	const mod = "example.com/op"
	tests := []struct {
		pkg, imp string
		allowed  bool
	}{
		{"internal/domain/replicaset", mod + "/internal/ports", true},
		{"internal/domain/replicaset", mod + "/api/chaos/v1", true},
		{"internal/domain/replicaset", "k8s.io/api/apps/v1", true},
		{"internal/domain/replicaset", "k8s.io/apimachinery/pkg/types", true},
		{"internal/domain/replicaset", "context", true},
		{"internal/domain/replicaset", "k8s.io/client-go/kubernetes", false},
		{"internal/domain/replicaset", "go.uber.org/zap", false},
		{"internal/domain/replicaset", "go.uber.org/fx", false},
		{"internal/domain/replicaset", "github.com/prometheus/client_golang/prometheus", false},
		{"internal/domain/replicaset", "net/http", false},
		{"internal/domain/replicaset", "os/exec", false},
		{"internal/domain/replicaset", mod + "/internal/adapters/kube", false},
		{"internal/ports", "k8s.io/api/core/v1", true},
		{"internal/ports", mod + "/api/chaos/v1", true},
		{"internal/ports", mod + "/internal/domain/replicaset", false},
		{"internal/ports", "k8s.io/client-go/tools/cache", false},
		{"test/portstest", "github.com/stretchr/testify/require", true},
		{"internal/adapters/kube", "k8s.io/client-go/kubernetes", true},
		{"internal/adapters/kube", mod + "/internal/ports", true},
		{"internal/adapters/kube", mod + "/internal/adapters/kube/internal", true},
		{"internal/adapters/cache", mod + "/internal/adapters/kube", false},
		{"internal/adapters/cache", mod + "/internal/domain/replicaset", false},
		{"api/chaos/v2", mod + "/api/chaos/v1", true},
		{"api/chaos/v1", mod + "/internal/ports", false},
		{"cmd/operator", "sigs.k8s.io/controller-runtime/pkg/client", false},
		{"cmd/operator", mod + "/internal/adapters/kube", true},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.pkg+"->"+tt.imp, "/", "_"), func(t *testing.T) {
			t.Parallel()
			got := architecture.Check(mod, []architecture.Package{{ImportPath: mod + "/" + tt.pkg, Imports: []string{tt.imp}}})
			if tt.allowed {
				assert.Empty(t, got)
			} else {
				assert.Len(t, got, 1)
			}
		})
	}
}
