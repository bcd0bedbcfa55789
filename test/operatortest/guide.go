package operatortest

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FencedBlock returns the text of the first fenced block of language lang
// ("```go", "```yaml") after the line marker (an HTML comment such as
// "<!-- wiring -->") in the Markdown file path, as written.
func FencedBlock(t testing.TB, path, marker, lang string) string {
	t.Helper()
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	var b strings.Builder
	s := bufio.NewScanner(strings.NewReader(string(doc)))
	marked, in := false, false
	for s.Scan() {
		l := strings.TrimSpace(s.Text())
		switch {
		case !marked && l == marker:
			marked = true
		case marked && !in && l == "```"+lang:
			in = true
		case in && l == "```":
			return b.String()
		case in:
			b.WriteString(s.Text())
			b.WriteByte('\n')
		}
	}
	require.NoError(t, s.Err())
	t.Fatalf("no ```%s block after %s in %s", lang, marker, path)
	return ""
}

// CodeBlock returns the code lines of the first ```go block after the line
// marker in the Markdown file path: trimmed, without blank lines and //
// comments. The examples' tests hold docs/extending.md's wiring blocks to
// their main.go with it.
func CodeBlock(t testing.TB, path, marker string) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(FencedBlock(t, path, marker, "go"), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
			lines = append(lines, l)
		}
	}
	return lines
}

// SourceLines returns the lines of the file path, trimmed.
func SourceLines(t testing.TB, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(src), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}
