package architecture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Package is what the rule needs to know of one package.
type Package struct {
	ImportPath string
	Imports    []string
}

// Violation is one import that breaks the rule.
type Violation struct {
	Package, Import, Reason string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s: %s", v.Package, v.Import, v.Reason)
}

// Load lists the non-test packages of the module rooted at dir.
func Load(dir string) (module string, pkgs []Package, err error) {
	out, err := goList(dir, "-m")
	if err != nil {
		return "", nil, err
	}
	module = strings.TrimSpace(string(out))
	out, err = goList(dir, "-json=ImportPath,Imports", "./...")
	if err != nil {
		return "", nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); err != nil {
			if errors.Is(err, io.EOF) {
				return module, pkgs, nil
			}
			return "", nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

func goList(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Libraries no package of the operator may import.
var bannedEverywhere = []string{"sigs.k8s.io/controller-runtime", "k8s.io/kubernetes"}

// Libraries that belong to adapters: transports, clients, DI, logging, metrics.
var adapterLibraries = []string{
	"k8s.io/client-go", "go.uber.org/fx", "go.uber.org/dig", "go.uber.org/zap",
	"github.com/prometheus", "net/http", "os/exec",
}

// Check applies the dependency rule to the packages of module.
func Check(module string, pkgs []Package) []Violation {
	var out []Violation
	for _, p := range pkgs {
		rel, ok := relative(module, p.ImportPath)
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			if reason := judge(module, rel, imp); reason != "" {
				out = append(out, Violation{Package: p.ImportPath, Import: imp, Reason: reason})
			}
		}
	}
	return out
}

// judge returns why rel (a package path relative to the module) may not
// import imp, or "" when it may.
func judge(module, rel, imp string) string {
	for _, b := range bannedEverywhere {
		if within(imp, b) {
			return "the operator is built without " + b
		}
	}
	impRel, internal := relative(module, imp)
	switch {
	case within(rel, "internal/domain"):
		if internal {
			if within(impRel, "internal/ports") || within(impRel, "api") || within(impRel, "internal/domain") {
				return ""
			}
			return "the domain may use only ports, api and other domain packages"
		}
		if within(imp, "k8s.io/api") || within(imp, "k8s.io/apimachinery") {
			return ""
		}
		if !isStandard(imp) {
			return "the domain may use only the standard library and Kubernetes API types"
		}
		for _, lib := range adapterLibraries {
			if within(imp, lib) {
				return "the domain must not know transports or processes"
			}
		}
	case within(rel, "internal/ports"):
		if internal && !within(impRel, "api") && !within(impRel, "internal/ports") {
			return "ports may use only api"
		}
		for _, lib := range adapterLibraries {
			if within(imp, lib) {
				return "ports must not depend on an adapter library"
			}
		}
	case within(rel, "api"):
		if internal {
			if !within(impRel, "api") {
				return "api types depend on nothing else of the module"
			}
		}
	case within(rel, "internal/adapters"):
		if !internal {
			return ""
		}
		own := segment(rel, 2)
		if within(impRel, "internal/adapters") && segment(impRel, 2) != own {
			return "adapters reach each other only through ports"
		}
		if within(impRel, "internal/domain") {
			return "adapters see the domain only through ports"
		}
	}
	return ""
}

func relative(module, path string) (string, bool) {
	if path == module {
		return "", true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok
}

// within reports whether path is prefix or below it.
func within(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func segment(path string, i int) string {
	parts := strings.Split(path, "/")
	if i < len(parts) {
		return parts[i]
	}
	return ""
}

// isStandard: standard library paths have no dot in their first element.
func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
