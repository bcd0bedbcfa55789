package docs_test

import (
	"fmt"
	"go/token"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proseName is a qualified Go name in a code span of the prose:
// `memory.NewStore`, `app.Writes(app.Create, …)`, `ports.Writer[T]`.
var proseName = regexp.MustCompile("`[^`]*`")

// qualified is a package name and an exported name; a path before it
// (`api/chaos/v2.ToHubJSON`) names a folder, not an import.
var qualified = regexp.MustCompile(`(?:^|[^A-Za-z0-9_/.])([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)`)

// nameUse is one qualified name the prose of a document uses.
type nameUse struct {
	doc        string
	line       int
	pkg, ident string
}

// proseLines yields the lines of a markdown text outside its fenced
// blocks, with their 1-based numbers.
func proseLines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fence := ""
		for i, line := range strings.Split(text, "\n") {
			trimmed := strings.TrimSpace(line)
			if fence != "" {
				if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
					fence = ""
				}
				continue
			}
			if f := fenceOf(trimmed); f != "" {
				fence = f
				continue
			}
			if !yield(i+1, line) {
				return
			}
		}
	}
}

// proseNames returns the qualified names of the code spans of a markdown
// text outside its fenced blocks (the Go blocks are compiled whole).
func proseNames(doc, text string) []nameUse {
	var out []nameUse
	for n, line := range proseLines(text) {
		for _, span := range proseName.FindAllString(line, -1) {
			for _, m := range qualified.FindAllStringSubmatch(span, -1) {
				out = append(out, nameUse{doc: doc, line: n, pkg: m[1], ident: m[2]})
			}
		}
	}
	return out
}

// nameProblems reports each use of a package the module imports under
// that name whose package declares no such name.
func nameProblems(t *testing.T, root string, uses []nameUse) []string {
	t.Helper()
	aliases := importNames(t, root)
	paths := map[string]bool{}
	for _, u := range uses {
		if p := aliases[u.pkg]; p != "" {
			paths[p] = true
		}
	}
	imp := exportImporter(t, root, token.NewFileSet(), slices.Sorted(maps.Keys(paths)))
	var problems []string
	for _, u := range uses {
		p := aliases[u.pkg]
		if p == "" {
			continue // not a package name the module uses: a field, a file name
		}
		pkg, err := imp.Import(p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %s.%s: %v", u.doc, u.line, u.pkg, u.ident, err))
			continue
		}
		if pkg.Scope().Lookup(u.ident) == nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %s.%s: package %s declares no %s", u.doc, u.line, u.pkg, u.ident, p, u.ident))
		}
	}
	return problems
}

// Every package-qualified name the guides' prose names in code spans
// exists: a renamed constructor fails here, not in a reader's editor.
func TestProseNamesExist(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	var uses []nameUse
	for _, doc := range goDocs(t, root) {
		uses = append(uses, proseNames(doc, readDoc(t, doc))...)
	}
	require.NotEmpty(t, uses)
	t.Logf("%d qualified names checked", len(uses))
	for _, p := range nameProblems(t, root, uses) {
		t.Error(p)
	}
}

func TestProseNamesCatchesAMissingName(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	uses := proseNames("docs/x.md", "Use `memory.NewReplicaSetStore()` and `memory.NewStore[T]`, and `app.Writes(app.Create, app.Nope)`.\n\n```go\nmemory.Ignored()\n```\nnot `a.b` nor `foo.Bar` nor `api/chaos/v2.Nope` nor config.Parse outside a span\n")
	got := nameProblems(t, root, uses)
	assert.Equal(t, []string{
		"docs/x.md:1: memory.NewReplicaSetStore: package github.com/hexagonal-operator/operator/internal/adapters/memory declares no NewReplicaSetStore",
		"docs/x.md:1: app.Nope: package github.com/hexagonal-operator/operator/internal/app declares no Nope",
	}, got)
}
