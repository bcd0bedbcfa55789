package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kustomize DIR")
		os.Exit(2)
	}
	if err := build(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kustomize:", err)
		os.Exit(1)
	}
}

func build(dir string) error {
	opts := krusty.MakeDefaultOptions()
	// As `kustomize build` without --reorder: the kustomization's
	// sortOptions, else the legacy order (kubectl's too).
	opts.Reorder = krusty.ReorderOptionUnspecified
	k := krusty.MakeKustomizer(opts)
	objs, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return fmt.Errorf("build %s: %w", dir, err)
	}
	out, err := objs.AsYaml()
	if err != nil {
		return fmt.Errorf("encode %s: %w", dir, err)
	}
	if _, err := os.Stdout.Write(out); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
