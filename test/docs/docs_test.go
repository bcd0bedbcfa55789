package docs_test

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requiredDocs must exist; every other docs/*.md is checked too.
var requiredDocs = []string{"README.md", "CONTRIBUTING.md", "docs/architecture.md", "docs/testing.md", "docs/reference.md", "docs/deploying.md", "docs/performance.md", "docs/reliability.md", "docs/extending.md", "docs/troubleshooting.md", "docs/upgrading.md"}

func TestDocsPointAtFilesThatExist(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	for _, doc := range docFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, doc))
		require.NoError(t, err)
		refs := references(string(text))
		assert.NotEmpty(t, refs, "%s names no path at all: is the extractor still reading it?", doc)
		t.Logf("%s: %d paths checked", doc, len(refs))
		for _, problem := range missingPaths(root, doc, refs) {
			t.Error(problem)
		}
	}
}

func TestArchitectureNamesEveryPortAndAdapter(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	text, err := os.ReadFile(filepath.Join(root, "docs/architecture.md"))
	require.NoError(t, err)
	for _, problem := range undocumented(root, "docs/architecture.md", references(string(text))) {
		t.Error(problem)
	}
}

func TestEveryPackageHasADocGo(t *testing.T) {
	t.Parallel()
	for _, dir := range packagesWithoutDocGo(t, repoRoot(t)) {
		t.Errorf("%s: a package without doc.go, which says what the package is for (CONTRIBUTING.md)", dir)
	}
}

// The extractor and the checker, fed with made-up documents: each case that
// names something missing must fail, naming the document and the path.
func TestMissingPathsCatchesWhatIsNotThere(t *testing.T) {
	t.Parallel()
	root := fakeTree(t, map[string]string{
		"go.mod":                     "module example.com/m\n",
		"Makefile":                   "",
		"internal/ports/clock.go":    "package ports\n",
		"internal/adapters/x/x.go":   "package x\n",
		"docs/other.md":              "",
		"api/chaos/v2/conversion.go": "package v2\n",
	})
	tests := []struct {
		name string
		doc  string // where the text lives, repo-relative
		text string
		want []string // the problems; none when everything exists
	}{
		{name: "backticked file exists", doc: "README.md", text: "see `internal/ports/clock.go`."},
		{name: "backticked folder exists", doc: "README.md", text: "in `internal/adapters/x/` and `internal/adapters/x`"},
		{name: "backticked file is missing", doc: "README.md", text: "see `internal/ports/clocks.go`",
			want: []string{"README.md:1: `internal/ports/clocks.go` does not exist"}},
		{name: "folder is missing", doc: "docs/a.md", text: "line one\nthe `internal/adapters/y` adapter",
			want: []string{"docs/a.md:2: `internal/adapters/y` does not exist"}},
		{name: "path inside a command", doc: "README.md", text: "`go test -run X ./internal/adapters/z/...`",
			want: []string{"README.md:1: `internal/adapters/z` does not exist"}},
		{name: "command with existing paths", doc: "README.md", text: "`go test ./internal/adapters/x/...` and `make -f Makefile`"},
		{name: "flag value", doc: "README.md", text: "`--dir=config/crd`",
			want: []string{"README.md:1: `config/crd` does not exist"}},
		{name: "glob matches", doc: "README.md", text: "`internal/ports/*.go`"},
		{name: "glob matches nothing", doc: "README.md", text: "`internal/ports/*.yaml`",
			want: []string{"README.md:1: `internal/ports/*.yaml` does not exist"}},
		{name: "Go identifier of a package", doc: "README.md", text: "`api/chaos/v2.ToHubJSON`"},
		{name: "Go identifier of a missing package", doc: "README.md", text: "`api/chaos/v3.ToHubJSON`",
			want: []string{"README.md:1: `api/chaos/v3.ToHubJSON` does not exist"}},
		{name: "relative link resolves from the doc", doc: "docs/a.md", text: "[other](other.md) and [up](../Makefile)"},
		{name: "relative link is broken", doc: "docs/a.md", text: "[gone](gone.md#part)",
			want: []string{"docs/a.md:1: `gone.md` does not exist"}},
		{name: "link out of the repository", doc: "README.md", text: "[notes](../shared/NOTES.md)",
			want: []string{"README.md:1: `../shared/NOTES.md` does not exist"}},
		{name: "repo-relative link from the root", doc: "README.md", text: "[ports](internal/ports/clock.go)"},
		{name: "web links and anchors are not files", doc: "README.md", text: "[fx](https://github.com/uber-go/fx) [a](#part)"},
		{name: "mermaid labels are checked", doc: "docs/a.md", text: "```mermaid\nflowchart LR\n  A[\"internal/adapters/q\"] --> B\n```",
			want: []string{"docs/a.md:3: `internal/adapters/q` does not exist"}},
		{name: "other code blocks are not", doc: "docs/a.md", text: "````go\nx := \"internal/adapters/q\"\n```\n````\n"},
		{name: "words that are not paths", doc: "README.md", text: "`hello=world` `bin/kubectl` `/mutate--v1-pod` `ports.Clock` `make test`"},
		{name: "two problems on two lines", doc: "README.md", text: "`test/nope`\n`bench/nope.go`",
			want: []string{"README.md:1: `test/nope` does not exist", "README.md:2: `bench/nope.go` does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, missingPaths(root, tt.doc, references(tt.text)))
		})
	}
}

func TestUndocumentedCatchesAMissingPortOrAdapter(t *testing.T) {
	t.Parallel()
	root := fakeTree(t, map[string]string{
		"internal/ports/doc.go":               "package ports\n",
		"internal/ports/clock.go":             "package ports\n",
		"internal/ports/clock_test.go":        "package ports\n",
		"internal/adapters/kube/kube.go":      "package kube\n",
		"internal/adapters/kube/sub/sub.go":   "package sub\n",
		"internal/adapters/memory/memory.go":  "package memory\n",
		"internal/adapters/testdata/empty.md": "",
	})
	tests := []struct {
		name string
		text string
		want []string
	}{
		{name: "all named", text: "`internal/ports/clock.go` `internal/adapters/kube` `internal/adapters/memory/`"},
		{name: "a file of the adapter names it", text: "`internal/ports/clock.go` `internal/adapters/kube/kube.go` `internal/adapters/memory`"},
		{name: "port left out", text: "`internal/adapters/kube` `internal/adapters/memory`", want: []string{"internal/ports/clock.go"}},
		{name: "adapter left out", text: "`internal/ports/clock.go` `internal/adapters/kube`", want: []string{"internal/adapters/memory"}},
		{name: "the diagram is not enough", text: "`internal/ports/clock.go` `internal/adapters/kube`\n```mermaid\nA[\"internal/adapters/memory\"]\n```",
			want: []string{"internal/adapters/memory"}},
		{name: "untagged mention is not enough", text: "internal/ports/clock.go internal/adapters/kube internal/adapters/memory",
			want: []string{"internal/ports/clock.go", "internal/adapters/kube", "internal/adapters/memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := undocumented(root, "docs/architecture.md", references(tt.text))
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
				assert.Contains(t, got[i], "docs/architecture.md")
			}
		})
	}
}

func TestPackagesWithoutDocGoFindsThem(t *testing.T) {
	t.Parallel()
	root := fakeTree(t, map[string]string{
		"go.mod":                        "module example.com/m\n",
		"documented/doc.go":             "package documented\n",
		"documented/a.go":               "package documented\n",
		"bare/a.go":                     "package bare\n",
		"deep/er/b.go":                  "package er\n",
		"testsonly/a_test.go":           "package testsonly_test\n",
		"pkg/testdata/c.go":             "package c\n",
		"tools/go.mod":                  "module example.com/tools\n",
		"tools/main.go":                 "package main\n",
		"notgo/readme.md":               "",
		"documented/testdata/x/x.go":    "package x\n",
		".hidden/h.go":                  "package h\n",
		"bin/whatever.go":               "package bin\n",
		"docgoonly/doc.go":              "package docgoonly\n",
		"docgoonly/docgoonly_test.go":   "package docgoonly\n",
		"mixed/doc_test.go":             "package mixed\n",
		"mixed/mixed.go":                "package mixed\n",
		"nested/inner/doc.go":           "package inner\n",
		"nested/inner/inner.go":         "package inner\n",
		"nested/outer.go":               "package nested\n",
		"nested/inner/deeper/deeper.go": "package deeper\n",
	})
	assert.Equal(t, []string{"bare", "deep/er", "mixed", "nested", "nested/inner/deeper"}, packagesWithoutDocGo(t, root))
}

// ref is one path a document points at.
type ref struct {
	path string
	line int
	// link: a markdown link target, resolved from the document's folder;
	// otherwise a backticked (or diagram) path, relative to the root.
	link bool
	// diagram: a label in a Mermaid block, which is no paragraph.
	diagram bool
}

var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// [text](target "title"); images too.
	mdLink = regexp.MustCompile(`\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)`)
	// Diagram labels are split on the punctuation of Mermaid's syntax.
	diagramSeparators = " \t\"'[](){}<>|;,"
	// Characters that end a sentence or wrap a token in running text.
	trim = "\"'(),;:!?*"
	// Token prefixes that make something a path of this repository.
	pathPrefixes = []string{"internal/", "api/", "cmd/", "config/", "test/", "docs/", "bench/", "examples/", ".ci/", "Makefile"}
)

// references extracts every path a markdown text points at: markdown
// link targets, and, in code spans and Mermaid diagrams, tokens that look
// like repository paths. Other fenced code blocks are examples of code or
// of a terminal, not references, and are skipped.
func references(text string) []ref {
	var (
		refs  []ref
		fence string // the opening fence of the block we are in
		lang  string
	)
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence, lang = "", ""
				continue
			}
			if lang == "mermaid" {
				for _, tok := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(diagramSeparators, r) }) {
					if p, ok := repoPath(tok); ok {
						refs = append(refs, ref{path: p, line: n, diagram: true})
					}
				}
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" {
			fence, lang = f, strings.TrimSpace(strings.TrimLeft(trimmed, f[:1]))
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			for _, tok := range strings.Fields(m[1]) {
				if p, ok := repoPath(tok); ok {
					refs = append(refs, ref{path: p, line: n})
				}
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if strings.HasPrefix(target, "#") || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			refs = append(refs, ref{path: target, line: n, link: true})
		}
	}
	return refs
}

// fenceOf returns the fence a line opens (three or more backticks or
// tildes), or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(line, c+c+c) {
			return c + c + c + strings.Repeat(c, len(line)-len(strings.TrimLeft(line, c))-3)
		}
	}
	return ""
}

// repoPath says whether a token names a path of the repository, and
// returns it cleaned of what surrounds it in prose or on a command line.
func repoPath(tok string) (string, bool) {
	if i := strings.LastIndex(tok, "="); i >= 0 {
		tok = tok[i+1:] // --flag=value, NAME=value
	}
	tok = strings.Trim(tok, trim)
	tok = strings.TrimPrefix(tok, "./")
	tok = strings.TrimSuffix(tok, "/...")
	tok = strings.TrimRight(tok, ".") // the end of a sentence
	hasPrefix := slices.ContainsFunc(pathPrefixes, func(p string) bool { return strings.HasPrefix(tok, p) })
	if !hasPrefix {
		return "", false
	}
	if tok == "Makefile" || strings.Contains(tok, "/") {
		return tok, true
	}
	for _, ext := range []string{".go", ".md", ".yaml"} {
		if strings.HasSuffix(tok, ext) {
			return tok, true
		}
	}
	return "", false
}

// missingPaths returns one problem per reference of doc (a repo-relative
// path) that names nothing under root.
func missingPaths(root, doc string, refs []ref) []string {
	var problems []string
	for _, r := range refs {
		rel := r.path
		if r.link && !strings.HasPrefix(rel, "/") {
			rel = path.Join(path.Dir(doc), rel)
		}
		rel = strings.TrimPrefix(rel, "/")
		if !exists(root, rel) && !goIdentifierIn(root, rel) {
			problems = append(problems, fmt.Sprintf("%s:%d: `%s` does not exist", doc, r.line, r.path))
		}
	}
	return problems
}

// exists reports whether rel names a file or folder, or, with a wildcard,
// at least one.
func exists(root, rel string) bool {
	if rel == "" || strings.HasPrefix(rel, "..") {
		return false
	}
	full := filepath.Join(root, filepath.FromSlash(rel))
	if strings.ContainsAny(rel, "*?[") {
		matches, err := filepath.Glob(full)
		return err == nil && len(matches) > 0
	}
	_, err := os.Stat(full)
	return err == nil
}

// goIdentifierIn accepts pkg/path.Identifier (and .Type.Method), the way
// docs name an exported Go identifier of a package folder.
func goIdentifierIn(root, rel string) bool {
	dir, ident, ok := strings.Cut(path.Base(rel), ".")
	if !ok || ident == "" || !unicode.IsUpper([]rune(ident)[0]) {
		return false
	}
	pkg := path.Join(path.Dir(rel), dir)
	goFiles, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pkg), "*.go"))
	return err == nil && len(goFiles) > 0
}

// undocumented returns one problem per port file (internal/ports/*.go but
// doc.go and tests) and per adapter package (internal/adapters/*) that no
// reference names: the architecture guide owes each a paragraph.
func undocumented(root, doc string, refs []ref) []string {
	named := map[string]bool{}
	var dirs []string // folders of the named files
	for _, r := range refs {
		if r.diagram || r.link {
			continue
		}
		p := strings.TrimSuffix(r.path, "/")
		named[p] = true
		dirs = append(dirs, path.Dir(p))
	}
	var problems []string
	ports, _ := filepath.Glob(filepath.Join(root, "internal", "ports", "*.go"))
	if len(ports) == 0 {
		problems = append(problems, doc+": no port found in internal/ports")
	}
	for _, f := range ports {
		base := filepath.Base(f)
		if base == "doc.go" || strings.HasSuffix(base, "_test.go") {
			continue
		}
		if rel := "internal/ports/" + base; !named[rel] {
			problems = append(problems, doc+": the port `"+rel+"` has no paragraph")
		}
	}
	adapters, _ := os.ReadDir(filepath.Join(root, "internal", "adapters"))
	for _, e := range adapters {
		if !e.IsDir() || e.Name() == "testdata" {
			continue
		}
		rel := "internal/adapters/" + e.Name()
		if !named[rel] && !slices.Contains(dirs, rel) {
			problems = append(problems, doc+": the adapter package `"+rel+"` has no paragraph")
		}
	}
	return problems
}

// packagesWithoutDocGo lists, repo-relative and sorted, every folder of
// the module under root that holds a non-test Go file but no doc.go.
// testdata folders, hidden folders, bin/ and nested modules (test/tools)
// are not packages of this module.
func packagesWithoutDocGo(t *testing.T, root string) []string {
	t.Helper()
	var missing []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." {
			name := d.Name()
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || rel == "bin" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		var hasGo, hasDoc bool
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			hasGo = true
			hasDoc = hasDoc || n == "doc.go"
		}
		if hasGo && !hasDoc {
			missing = append(missing, rel)
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(missing)
	return missing
}

// docFiles lists the documents to check, repo-relative.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	for _, d := range requiredDocs {
		require.FileExists(t, filepath.Join(root, d))
	}
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	docs := slices.Clone(requiredDocs)
	for _, g := range guides {
		if rel := "docs/" + filepath.Base(g); !slices.Contains(docs, rel) {
			docs = append(docs, rel)
		}
	}
	return docs
}

// repoRoot walks up from the test's folder to the one with go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's folder")
		dir = parent
	}
}

// fakeTree writes files (repo-relative path → content) under a new folder.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}
