package helm_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

// `make release` writes what a release ships, at VERSION: the installer
// with the image tagged VERSION, and the chart packaged at VERSION with
// that appVersion.
func TestMakeReleaseWritesTheInstallerAndTheChart(t *testing.T) {
	t.Parallel()
	helm, err := controlplane.Binary("helm")
	require.NoError(t, err, "run make tools")
	dist := t.TempDir()
	v := version(t)
	ctx, cancel := context.WithTimeout(t.Context(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "release", "DIST="+dist, "BIN="+filepath.Dir(helm))
	cmd.Dir = repoPath(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	installer, err := os.ReadFile(filepath.Join(dist, "install.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(installer), "image: hexagonal-operator:"+v+"\n")

	f, err := os.Open(filepath.Join(dist, "hexagonal-operator-"+v+".tgz"))
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var chart struct {
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("the package holds no Chart.yaml")
		}
		require.NoError(t, err)
		if strings.HasSuffix(h.Name, "/Chart.yaml") && strings.Count(h.Name, "/") == 1 {
			data, err := io.ReadAll(tr)
			require.NoError(t, err)
			require.NoError(t, yaml.Unmarshal(data, &chart))
			break
		}
	}
	assert.Equal(t, v, chart.Version)
	assert.Equal(t, v, chart.AppVersion)
}
