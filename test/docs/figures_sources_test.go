package docs_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The rules of figures_test.go applied to docs/performance.md itself:
// every table names its run, whose log holds the table's figures, and the
// page's prose quotes its tables, docs/scale.svg or those logs. The page's
// last part, from earlierRuns on, holds the runs printed before their logs
// were committed, which have no log to be held to.

// earlierRuns heads the part of docs/performance.md the rules leave out.
const earlierRuns = "\n## Earlier runs, without their logs\n"

// loggedRuns is docs/performance.md up to earlierRuns.
func loggedRuns(t *testing.T) string {
	t.Helper()
	text := readDoc(t, "docs/performance.md")
	before, _, found := strings.Cut(text, earlierRuns)
	require.True(t, found, "docs/performance.md has no %q heading", strings.TrimSpace(earlierRuns))
	require.Contains(t, before, "\nRun: commit `", "docs/performance.md has no logged run before its earlier ones")
	return before
}

func TestPerformanceTablesComeFromTheirLogs(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	const doc = "docs/performance.md"
	for _, problem := range tableSourceProblems(doc, loggedRuns(t), gitCommitExists(root), repoFile(root)) {
		t.Error(problem)
	}
}

func TestPerformanceProseQuotesItsSources(t *testing.T) {
	t.Parallel()
	const doc = "docs/performance.md"
	for _, problem := range quoteProblems(doc, loggedRuns(t), publishedFigures(t, repoRoot(t))) {
		t.Error(problem)
	}
}
