// Command kustomize renders a kustomization with the standalone kustomize
// module pinned in this folder's go.mod, as `kustomize build DIR` does, and
// prints the YAML. kubectl bundles an older kustomize; test/e2e renders
// every kustomization under config/ with both and requires the same
// objects, so that config/ works with whichever one a user has.
package main
