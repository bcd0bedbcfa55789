package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "crdtrim: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("crdtrim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	embedded := fs.String("embedded", "", "comma-separated dotted paths, from a version's openAPIV3Schema, of properties whose subtrees lose their descriptions")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *embedded == "" || fs.NArg() == 0 {
		return errors.New("usage: crdtrim -embedded path[,path...] file.yaml [file.yaml ...]")
	}
	paths := strings.Split(*embedded, ",")
	for _, file := range fs.Args() {
		in, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		out, err := trim(in, paths)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if !bytes.Equal(in, out) {
			if err := os.WriteFile(file, out, 0o644); err != nil {
				return err
			}
		}
		_, _ = fmt.Fprintf(stderr, "crdtrim: %s: %d → %d bytes\n", file, len(in), len(out))
	}
	return nil
}

// trim returns the CRD in doc with the descriptions under paths removed
// from every version's schema. A path found in no version is an error, so
// a renamed field cannot quietly turn the trim off.
func trim(doc []byte, paths []string) ([]byte, error) {
	var crd map[string]any
	if err := yaml.Unmarshal(doc, &crd); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if crd["kind"] != "CustomResourceDefinition" {
		return nil, fmt.Errorf("kind %v, want CustomResourceDefinition", crd["kind"])
	}
	spec, _ := crd["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	found := map[string]bool{}
	for _, v := range versions {
		version, _ := v.(map[string]any)
		schema, _ := version["schema"].(map[string]any)
		root, _ := schema["openAPIV3Schema"].(map[string]any)
		for _, path := range paths {
			if prop := property(root, path); prop != nil {
				found[path] = true
				for _, child := range children(prop) {
					dropDescriptions(child)
				}
			}
		}
	}
	for _, path := range paths {
		if !found[path] {
			return nil, fmt.Errorf("no version has the property %s", path)
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return append([]byte("---\n"), out...), nil
}

// property walks a dotted path of property names down from a schema.
func property(schema map[string]any, path string) map[string]any {
	for _, name := range strings.Split(path, ".") {
		props, _ := schema["properties"].(map[string]any)
		next, ok := props[name].(map[string]any)
		if !ok {
			return nil
		}
		schema = next
	}
	return schema
}

// children are the schemas nested directly in a schema: its properties,
// items, additionalProperties and the branches of allOf/anyOf/oneOf/not.
func children(schema map[string]any) []map[string]any {
	var out []map[string]any
	add := func(v any) {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		for _, p := range props {
			add(p)
		}
	}
	add(schema["items"])
	add(schema["additionalProperties"])
	add(schema["not"])
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := schema[key].([]any); ok {
			for _, s := range list {
				add(s)
			}
		}
	}
	return out
}

func dropDescriptions(schema map[string]any) {
	delete(schema, "description")
	for _, child := range children(schema) {
		dropDescriptions(child)
	}
}
