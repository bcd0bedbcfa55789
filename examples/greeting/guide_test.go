package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

var guidePath = filepath.Join("..", "..", "docs", "extending.md")

// maxWiringLines is what the example sets out to show: a CRD-backed kind
// with a controller, a defaulter and a validator takes at most this many
// lines of wiring.
const maxWiringLines = 15

// The guide's greeting wiring block is the wiring of main.go, line for
// line, as many lines as the guide says, and within the promise.
func TestGuideShowsTheWiring(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile(guidePath)
	require.NoError(t, err)

	claim := regexp.MustCompile(`\*\*(\d+) lines of wiring, in main\.go alone\*\*`).FindStringSubmatch(string(guide))
	require.NotNil(t, claim, "the guide states how many lines the wiring takes")
	wiring := operatortest.CodeBlock(t, guidePath, "<!-- wiring:greeting -->")
	assert.Len(t, wiring, atoi(t, claim[1]), "the block has as many lines as the guide claims")
	assert.LessOrEqual(t, len(wiring), maxWiringLines)
	mainLines := operatortest.SourceLines(t, "main.go")
	for _, l := range wiring {
		assert.True(t, slices.Contains(mainLines, l), "main.go has the guide's line %q", l)
	}
	for _, want := range []string{"app.Controller(", "app.Mutating[", "app.Validating[", "app.Main(\"greeting\", os.Args[1:], os.Getenv, os.Stdout, os.Stderr, greetings)"} {
		assert.True(t, slices.ContainsFunc(wiring, func(l string) bool { return strings.Contains(l, want) }), "the wiring shows %s", want)
	}
}

// The guide states how many production files the example takes: the api
// package, the domain package and main.go, tests left out.
func TestGuideCountsTheFiles(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile(guidePath)
	require.NoError(t, err)
	claim := regexp.MustCompile(`\*\*(\d+) production files\*\*`).FindStringSubmatch(string(guide))
	require.NotNil(t, claim, "the guide states how many files the example takes")

	var files []string
	for _, dir := range []string{filepath.Join("api", "v1"), "greeting", "."} {
		matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, m := range matches {
			if !strings.HasSuffix(m, "_test.go") {
				files = append(files, m)
			}
		}
	}
	assert.Len(t, files, atoi(t, claim[1]), "production files: %v", files)
	assert.Contains(t, files, "main.go")
	assert.Contains(t, files, filepath.Join("api", "v1", "zz_generated.deepcopy.go"))
}

// The webhook configurations the guide tells a deployment to register are
// what the wiring's rows render to. The operator's graph is built, not
// started: no cluster is needed.
func TestGuideRegistersTheWebhooksTheWiringServes(t *testing.T) {
	t.Parallel()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	cfg, err := config.Parse([]string{"--kubeconfig=" + kubeconfig, "--controllers="}, func(string) string { return "" })
	require.NoError(t, err)
	var table struct {
		fx.In
		Hooks []webhook.Hook `group:"webhooks"`
	}
	require.NoError(t, app.New(cfg, greetings, fx.Populate(&table)).Err())
	hooks := greetingHooks(table.Hooks)
	require.Len(t, hooks, 2)

	docs := strings.Split(operatortest.FencedBlock(t, guidePath, "<!-- webhooks:greeting -->", "yaml"), "\n---\n")
	require.Len(t, docs, 2, "a Mutating- and a ValidatingWebhookConfiguration")
	var mutating admissionregistrationv1.MutatingWebhookConfiguration
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[0]), &mutating))
	var validating admissionregistrationv1.ValidatingWebhookConfiguration
	require.NoError(t, yaml.UnmarshalStrict([]byte(docs[1]), &validating))

	// config/webhook's base names, which config/default prefixes.
	svc := webhook.ServiceRef{Namespace: "system", Name: "webhook-service"}
	assert.Equal(t, asYAML(t, webhook.MutatingWebhookConfiguration("mutating-webhook-configuration", svc, hooks)), asYAML(t, &mutating))
	assert.Equal(t, asYAML(t, webhook.ValidatingWebhookConfiguration("validating-webhook-configuration", svc, hooks)), asYAML(t, &validating))
}

// asYAML is obj in one canonical spelling, so that a difference shows as
// a readable diff.
func asYAML(t *testing.T, obj any) string {
	t.Helper()
	out, err := yaml.Marshal(obj)
	require.NoError(t, err)
	return string(out)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
