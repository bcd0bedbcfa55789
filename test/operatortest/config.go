package operatortest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// CopyConfig copies the config folder at src into a temporary folder,
// replaces in its default/kustomization.yaml each key of edits (a whole
// line, found exactly once) with its value, as a user edits it, and
// returns the copy's config folder.
func CopyConfig(t testing.TB, src string, edits map[string]string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	path := filepath.Join(dst, "default", "kustomization.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(data)
	for old, repl := range edits {
		require.Equal(t, 1, strings.Count(text, "\n"+old+"\n"), "config/default has the line %q once", old)
		text = strings.Replace(text, "\n"+old+"\n", "\n"+repl+"\n", 1)
	}
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return dst
}
