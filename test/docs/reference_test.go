package docs_test

import (
	"bytes"
	"maps"
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
	paths := []string{app.ConvertPath, app.PodMutatePath, app.PodValidatePath}
	paths = append(paths, app.ChaosPodV1MutatePath, app.ChaosPodV1ValidatePath, app.ChaosPodV2MutatePath, app.ChaosPodV2ValidatePath)
	for _, p := range paths {
		assert.Contains(t, ref, p, "docs/reference.md does not name the path %s", p)
	}
	for _, reason := range []string{replicaset.ReasonLabeled, chaospod.ReasonPodCreated, chaospod.ReasonPodStopped} {
		assert.Contains(t, ref, reason, "docs/reference.md does not name the Event reason %s", reason)
	}
}

// Every flag's default, as the binary prints it, is the default the
// reference's flag table gives it.
func TestReferenceGivesEveryFlagsDefault(t *testing.T) {
	t.Parallel()
	var usage bytes.Buffer
	config.Usage(&usage)
	defaults := flagDefaults(usage.String())
	require.Greater(t, len(defaults), 20, "the usage text gives the defaults: %s", usage.String())

	assert.Empty(t, wrongDefaults(defaults, reference(t)))
}

func TestWrongDefaultsCatchesAStaleRow(t *testing.T) {
	t.Parallel()
	const table = "## Flags and exit codes\n\n| flag | default | meaning |\n|---|---|---|\n" +
		"| `--workers` | `16` | reconciles |\n" +
		"| `--cert-name` / `--cert-key` | `tls.crt` / `tls.key` | files |\n" +
		"| `--leader-election-lease-duration` / `-renew-deadline` | `15s` / `10s` | durations |\n" +
		"\n## Endpoints\n\n| `--port` (`9443`) | / | |\n"
	tests := []struct {
		name     string
		defaults map[string]string
		want     []string
	}{
		{"all given", map[string]string{"workers": "16", "cert-key": "tls.key", "leader-election-renew-deadline": "10s"}, nil},
		{"stale default", map[string]string{"workers": "128"}, []string{"--workers: the table gives `16`, the binary 128"}},
		{"flag without a row", map[string]string{"port": "9443"}, []string{"--port: no row in the flag table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, wrongDefaults(tt.defaults, table))
		})
	}
}

// flagDefaults reads each flag's default from the usage text, as the flag
// package prints it ("(default X)" closing the flag's description); flags
// whose default is described in words instead are left out.
func flagDefaults(usage string) map[string]string {
	entry := regexp.MustCompile(`(?m)^\s+--([a-z0-9-]+)[^\n]*\n\s+.*\(default ([^:)][^)]*)\)$`)
	defaults := map[string]string{}
	for _, m := range entry.FindAllStringSubmatch(usage, -1) {
		defaults[m[1]] = m[2]
	}
	return defaults
}

// wrongDefaults lists the flags whose row in the reference's flag table
// (the section "Flags and exit codes") is missing or does not give the
// default as code. A row may hold several flags; the leader-election
// durations are named by their suffix after the first.
func wrongDefaults(defaults map[string]string, ref string) []string {
	_, section, ok := strings.Cut(ref, "## Flags and exit codes")
	if !ok {
		return []string{"no section \"Flags and exit codes\""}
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
		if cells := strings.Split(line, "|"); strings.HasPrefix(line, "| `-") && len(cells) >= 4 {
			rows = append(rows, cells[1:3])
		}
	}
	var wrong []string
	for _, name := range slices.Sorted(maps.Keys(defaults)) {
		short := "`-" + strings.TrimPrefix(name, "leader-election-") + "`"
		i := slices.IndexFunc(rows, func(r []string) bool {
			return strings.Contains(r[0], "`--"+name+"`") || strings.Contains(r[0], short)
		})
		switch {
		case i < 0:
			wrong = append(wrong, "--"+name+": no row in the flag table")
		case !strings.Contains(rows[i][1], "`"+defaults[name]+"`"):
			wrong = append(wrong, "--"+name+": the table gives "+strings.TrimSpace(rows[i][1])+", the binary "+defaults[name])
		}
	}
	return wrong
}
