package docs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/config"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
	"github.com/hexagonal-operator/operator/internal/domain/replicaset"
)

// reference is docs/reference.md.
func reference(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "reference.md"))
	require.NoError(t, err)
	return string(text)
}

// Every flag the binary accepts is in the reference, as --name.
func TestReferenceNamesEveryFlag(t *testing.T) {
	t.Parallel()
	var usage bytes.Buffer
	config.Usage(&usage)
	flags := regexp.MustCompile(`(?m)^\s+--?([a-z0-9-]+)`).FindAllStringSubmatch(usage.String(), -1)
	require.Greater(t, len(flags), 30, "the usage text lists the flags: %s", usage.String())
	ref := reference(t)
	for _, f := range flags {
		name := f[1]
		// A pair like --metrics-cert-name / --metrics-cert-key, or the
		// leader-election durations, may share a row.
		short := "-" + strings.TrimPrefix(name, "leader-election-")
		assert.True(t, strings.Contains(ref, "`--"+name+"`") || strings.Contains(ref, "--"+name) || strings.Contains(ref, short+"`"),
			"docs/reference.md does not name --%s", name)
	}
}

// Every metric the operator registers is in the reference.
func TestReferenceNamesEveryMetric(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	name := regexp.MustCompile(`"((?:operator|controller_runtime|workqueue|rest_client|leader_election)_[a-z_]+[a-z])"`)
	var metrics []string
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			if !strings.HasSuffix(m[1], "_") && !slices.Contains(metrics, m[1]) {
				metrics = append(metrics, m[1])
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, len(metrics), 15, "the metric names were found: %v", metrics)
	ref := reference(t)
	for _, m := range metrics {
		assert.Contains(t, ref, "`"+m+"`", "docs/reference.md does not name the metric %s", m)
	}
}

// Every webhook path the operator serves, and the Event reasons it
// records, are in the reference.
func TestReferenceNamesEveryPathAndEventReason(t *testing.T) {
	t.Parallel()
	ref := reference(t)
	paths := []string{app.ConvertPath}
	for _, h := range app.PodWebhooks() {
		paths = append(paths, h.Path)
	}
	paths = append(paths, app.ChaosPodV1MutatePath, app.ChaosPodV1ValidatePath, app.ChaosPodV2MutatePath, app.ChaosPodV2ValidatePath)
	for _, p := range paths {
		assert.Contains(t, ref, p, "docs/reference.md does not name the path %s", p)
	}
	for _, reason := range []string{replicaset.ReasonLabeled, chaospod.ReasonPodCreated, chaospod.ReasonPodStopped} {
		assert.Contains(t, ref, reason, "docs/reference.md does not name the Event reason %s", reason)
	}
}
