package docs_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Users copy the guides' Go, so every ```go block of README.md and
// docs/*.md is type-checked against the module as it stands:
//
//   - a block that starts with `package` is a file, checked as it is;
//   - a block of declarations is the body of a file of its own;
//   - any other block is statements, the body of a function; a marker
//     `<!-- go:func t *testing.T, ctx context.Context -->` above the fence
//     gives that function the parameters the statements take as given.
//
// A fragment needs no import lines: a name used as a package (`memory.`,
// `appsv1.`) is imported as the module's own code most often imports it.
// Unused variables and imports are allowed, as in any excerpt.
//
// Two markers take a block out of the compiler's hands, and say why:
// `<!-- go:excerpt examples/configmap/main.go -->` holds each code line of
// the block to a line of that file (which the build or its tests compile),
// for a block that quotes a file's parts out of their context;
// `<!-- go:unchecked <reason> -->` for a block that cannot compile, such
// as a line naming code that is not shipped. Markers stand on the lines
// right above the fence; an unknown one fails.

// goDocs lists the documents whose Go blocks are checked, repo-relative.
func goDocs(t *testing.T, root string) []string {
	t.Helper()
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	docs := []string{"README.md"}
	for _, g := range guides {
		docs = append(docs, "docs/"+filepath.Base(g))
	}
	return docs
}

func TestGoBlocksCompile(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	var blocks []codeBlock
	for _, doc := range goDocs(t, root) {
		blocks = append(blocks, goBlocks(doc, readDoc(t, doc))...)
	}
	require.NotEmpty(t, blocks, "no ```go block found: is the extractor still reading the guides?")
	t.Logf("%d Go blocks checked", len(blocks))
	for _, problem := range checkBlocks(t, root, blocks) {
		t.Error(problem)
	}
}

// The checker, fed with made-up blocks: each case that names what the
// module lacks, or that is no Go, must fail, naming the document and line.
func TestCheckBlocksCatchesWhatDoesNotCompile(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	tests := []struct {
		name string
		doc  string // the markdown, checked as docs/x.md
		want []string
	}{
		{name: "statements on the memory adapters",
			doc: "<!-- go:func ctx context.Context -->\n```go\nstore := memory.NewStore[*appsv1.ReplicaSet](schema.GroupKind{Kind: \"ReplicaSet\"})\n_, err := store.Create(ctx, &appsv1.ReplicaSet{})\n```\n"},
		{name: "a name the package lacks",
			doc:  "text\n\n```go\nstore := memory.NewReplicaSetStore()\n```\n",
			want: []string{"docs/x.md:4: undefined: memory.NewReplicaSetStore"}},
		{name: "a call short of an argument",
			doc:  "<!-- go:func ctx context.Context, s *memory.Store[*appsv1.ReplicaSet] -->\n```go\n\ns.Get(key)\n```\n",
			want: []string{"docs/x.md:4: undefined: key", "docs/x.md:4: not enough arguments"}},
		{name: "a variable the block does not give",
			doc:  "```go\nfmt.Println(ctx)\n```\n",
			want: []string{"docs/x.md:2: undefined: ctx"}},
		{name: "declarations",
			doc:  "```go\ntype V struct{}\n\nfunc (*V) ValidateCreate(_ context.Context, cp *chaosv1.ChaosPod) (ports.Warnings, error) {\n\treturn nil, ports.Denied(cp.Name)\n}\n\nvar _ ports.Validator[*chaosv1.ChaosPod] = (*V)(nil)\n```\n",
			want: []string{"docs/x.md:8: cannot use (*V)(nil)"}},
		{name: "a whole file",
			doc: "```go\npackage main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n```\n"},
		{name: "a whole file with a wrong import",
			doc:  "```go\npackage main\n\nimport \"fmt\"\n\nfunc main() { fmt.Printl(\"hi\") }\n```\n",
			want: []string{"docs/x.md:6: undefined: fmt.Printl"}},
		{name: "pseudo-code",
			doc:  "```go\nif err != nil { ... }\n```\n",
			want: []string{"docs/x.md:2: expected"}},
		{name: "an indented block in a list",
			doc: "- item\n\n  ```go\n  cfg, err := config.Parse(nil, os.Getenv)\n  ```\n"},
		{name: "an excerpt of a file",
			doc: "<!-- go:excerpt internal/adapters/memory/clock.go -->\n```go\n// the clock\nfunc NewClock(now time.Time) *Clock\n```\n"},
		{name: "an excerpt the file lacks",
			doc:  "<!-- go:excerpt internal/adapters/memory/clock.go -->\n```go\nfunc NewClock() *Clock\n```\n",
			want: []string{"docs/x.md:3: internal/adapters/memory/clock.go has no line \"func NewClock() *Clock\""}},
		{name: "an excerpt of a missing file",
			doc:  "<!-- go:excerpt internal/adapters/memory/clocks.go -->\n```go\nfunc NewClock() *Clock\n```\n",
			want: []string{"docs/x.md:2: go:excerpt internal/adapters/memory/clocks.go"}},
		{name: "unchecked with a reason",
			doc: "<!-- go:unchecked names a function not shipped -->\n```go\nnotShipped(),\n```\n"},
		{name: "unchecked without a reason",
			doc:  "<!-- go:unchecked -->\n```go\nnotShipped(),\n```\n",
			want: []string{"docs/x.md:2: go:unchecked needs a reason"}},
		{name: "a misspelt marker",
			doc:  "<!-- go:unchekced not shipped -->\n```go\nnotShipped(),\n```\n",
			want: []string{"docs/x.md:2: unknown marker go:unchekced", "docs/x.md:3: expected"}},
		{name: "other languages are not Go",
			doc: "```sh\ngo test ./...\n```\n\n```text\nif err != nil { ... }\n```\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := checkBlocks(t, root, goBlocks("docs/x.md", tt.doc))
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

// codeBlock is one ```go block of a document.
type codeBlock struct {
	doc     string
	fence   int // the line of the opening fence
	text    string
	markers []string // the go: markers above the fence, without "go:"
}

// goBlocks returns the ```go blocks of a markdown text, each with the
// markers on the lines right above its fence and its lines unindented by
// the fence's indentation.
func goBlocks(doc, text string) []codeBlock {
	var (
		blocks  []codeBlock
		cur     *codeBlock
		fence   string
		indent  string
		body    strings.Builder
		pending []string // markers seen since the last other line
	)
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				if cur != nil {
					cur.text = body.String()
					blocks = append(blocks, *cur)
				}
				fence, cur = "", nil
				continue
			}
			if cur != nil {
				body.WriteString(strings.TrimPrefix(line, indent))
				body.WriteByte('\n')
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" {
			fence = f
			if strings.TrimSpace(strings.TrimLeft(trimmed, f[:1])) == "go" {
				indent = line[:len(line)-len(strings.TrimLeft(line, " \t"))]
				cur = &codeBlock{doc: doc, fence: i + 1, markers: pending}
				body.Reset()
			}
			pending = nil
			continue
		}
		if m, ok := strings.CutPrefix(trimmed, "<!--"); ok && strings.HasSuffix(m, "-->") {
			if m, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimSuffix(m, "-->")), "go:"); ok {
				pending = append(pending, m)
			}
			continue
		}
		pending = nil
	}
	return blocks
}

// markerNames are the markers a block may carry.
var markerNames = []string{"func", "excerpt", "unchecked"}

// marker returns the argument of the block's go:<name> marker.
func (b codeBlock) marker(name string) (string, bool) {
	for _, m := range b.markers {
		if m == name || strings.HasPrefix(m, name+" ") {
			return strings.TrimSpace(strings.TrimPrefix(m, name)), true
		}
	}
	return "", false
}

// source is a block made a Go file, waiting for its imports.
type source struct {
	file    *ast.File
	imports []string
}

// checkBlocks returns one problem per error in blocks, at its document
// line.
func checkBlocks(t *testing.T, root string, blocks []codeBlock) []string {
	t.Helper()
	fset := token.NewFileSet()
	aliases := importNames(t, root)
	var (
		problems []string
		sources  []source
		paths    = map[string]bool{}
	)
	for _, b := range blocks {
		for _, m := range b.markers {
			if name, _, _ := strings.Cut(m, " "); !slices.Contains(markerNames, name) {
				problems = append(problems, fmt.Sprintf("%s:%d: unknown marker go:%s (known: go:%s)", b.doc, b.fence, name, strings.Join(markerNames, ", go:")))
			}
		}
		if file, ok := b.marker("excerpt"); ok {
			problems = append(problems, excerptProblems(root, b, file)...)
			continue
		}
		if reason, ok := b.marker("unchecked"); ok {
			if reason == "" {
				problems = append(problems, fmt.Sprintf("%s:%d: go:unchecked needs a reason", b.doc, b.fence))
			}
			continue
		}
		s, err := parseBlock(fset, b, aliases)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, p := range s.imports {
			paths[p] = true
		}
		sources = append(sources, s)
	}
	if len(sources) == 0 {
		return problems
	}
	imp := exportImporter(t, root, fset, slices.Sorted(maps.Keys(paths)))
	for _, s := range sources {
		var errs []string
		conf := types.Config{Importer: imp, Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) && te.Soft && (strings.Contains(te.Msg, "declared and not used") || strings.Contains(te.Msg, "imported and not used")) {
				return
			}
			errs = append(errs, positioned(fset, err))
		}}
		_, _ = conf.Check("docblock", fset, []*ast.File{s.file}, nil)
		problems = append(problems, errs...)
	}
	return problems
}

// parseBlock makes a block a file: as it is, as declarations, or as the
// body of a function, with an import for each package name it uses. A
// //line directive keeps positions on the document's lines.
func parseBlock(fset *token.FileSet, b codeBlock, aliases map[string]string) (source, error) {
	at := fmt.Sprintf("//line %s:%d\n", b.doc, b.fence+1)
	// A relative //line file name is taken from the folder of the
	// parsed file's name, so that name has none.
	name := "block.go"
	if strings.HasPrefix(strings.TrimSpace(b.text), "package ") {
		f, err := parser.ParseFile(fset, name, at+b.text, 0)
		if err != nil {
			return source{}, errors.New(positioned(fset, err))
		}
		var paths []string
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return source{}, err
			}
			paths = append(paths, p)
		}
		return source{file: f, imports: paths}, nil
	}
	params, statements := b.marker("func")
	src := "package docblock\n" + at + b.text
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil || statements {
		// Not declarations: statements, the body of a function.
		src = "package docblock\nfunc _(" + params + ") {\n" + at + b.text + "\n}\n"
		f, err = parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	}
	if err != nil {
		return source{}, errors.New(positioned(fset, err))
	}
	// Parse again with the imports in front, where Go wants them.
	head, rest, _ := strings.Cut(src, "\n")
	var withImports strings.Builder
	withImports.WriteString(head + "\nimport (\n")
	var paths []string
	for _, p := range packagesUsed(f, aliases) {
		fmt.Fprintf(&withImports, "\t%s %q\n", p.name, p.path)
		paths = append(paths, p.path)
	}
	withImports.WriteString(")\n" + rest)
	f, err = parser.ParseFile(fset, name, withImports.String(), parser.SkipObjectResolution)
	if err != nil {
		return source{}, errors.New(positioned(fset, err))
	}
	return source{file: f, imports: paths}, nil
}

type namedImport struct{ name, path string }

// packagesUsed returns an import for each identifier used as X in X.Sel
// that names a package the module imports and that the file does not
// declare at its top level.
func packagesUsed(f *ast.File, aliases map[string]string) []namedImport {
	declared := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				declared[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					declared[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						declared[n.Name] = true
					}
				}
			}
		}
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && aliases[id.Name] != "" && !declared[id.Name] {
				used[id.Name] = true
			}
		}
		return true
	})
	var imports []namedImport
	for _, name := range slices.Sorted(maps.Keys(used)) {
		imports = append(imports, namedImport{name, aliases[name]})
	}
	return imports
}

// importNames maps each name under which the module's Go files import a
// package to the path they import most often under it.
func importNames(t *testing.T, root string) map[string]string {
	t.Helper()
	counts := map[string]map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || name == "bin" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			importPath, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			name := path.Base(importPath)
			if spec.Name != nil {
				name = spec.Name.Name
			}
			if !token.IsIdentifier(name) {
				continue // "_", ".", "yaml.v3"
			}
			if counts[name] == nil {
				counts[name] = map[string]int{}
			}
			counts[name][importPath]++
		}
		return nil
	})
	require.NoError(t, err)
	names := map[string]string{}
	for name, byPath := range counts {
		// The most used path wins; a tie goes to the first in order.
		names[name] = slices.MaxFunc(slices.Sorted(maps.Keys(byPath)), func(a, b string) int {
			if c := byPath[a] - byPath[b]; c != 0 {
				return c
			}
			return strings.Compare(b, a)
		})
	}
	return names
}

// exportImporter imports from the compiler's export data, which one
// `go list -export` builds (or finds in the build cache) for the packages
// and everything they import: far faster than type-checking Kubernetes'
// libraries from source.
func exportImporter(t *testing.T, root string, fset *token.FileSet, paths []string) types.Importer {
	t.Helper()
	exports := map[string]string{}
	if len(paths) > 0 {
		cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}, paths...)...)
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "go list -export: %s", stderr.String())
		s := bufio.NewScanner(bytes.NewReader(out))
		for s.Scan() {
			if p, export, ok := strings.Cut(s.Text(), " "); ok && export != "" {
				exports[p] = export
			}
		}
		require.NoError(t, s.Err())
	}
	return importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
		export, ok := exports[p]
		if !ok {
			return nil, fmt.Errorf("no export data for %q: is it a package of the module or of go.mod?", p)
		}
		return os.Open(export)
	})
}

// excerptProblems holds each code line of the block (trimmed, without
// blank lines and // comments) to a line of file that contains it.
func excerptProblems(root string, b codeBlock, file string) []string {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return []string{fmt.Sprintf("%s:%d: go:excerpt %s: %v", b.doc, b.fence, file, err)}
	}
	var lines []string
	for _, l := range strings.Split(string(src), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	var problems []string
	for i, l := range strings.Split(b.text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		if !slices.ContainsFunc(lines, func(s string) bool { return strings.Contains(s, l) }) {
			problems = append(problems, fmt.Sprintf("%s:%d: %s has no line %q", b.doc, b.fence+1+i, file, l))
		}
	}
	return problems
}

// positioned renders a parse or type error as doc:line: message.
func positioned(fset *token.FileSet, err error) string {
	var te types.Error
	if errors.As(err, &te) {
		p := fset.Position(te.Pos)
		return fmt.Sprintf("%s:%d: %s", p.Filename, p.Line, te.Msg)
	}
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return fmt.Sprintf("%s:%d: %s", list[0].Pos.Filename, list[0].Pos.Line, list[0].Msg)
	}
	return err.Error()
}
