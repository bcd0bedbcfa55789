// Package docs keeps the reader guides true: its tests read README.md,
// CONTRIBUTING.md and docs/*.md and fail, naming the document and the path,
// when a file or folder they point at does not exist, when
// docs/architecture.md leaves out a port or an adapter package, or when a
// package of the module has no doc.go.
//
// The checks are plain functions fed with text and a file tree, and each
// has table cases that must fail, so a check that stopped catching
// anything would be noticed.
package docs
