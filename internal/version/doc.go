// Package version holds the build's version, stamped by the linker:
//
//	go build -ldflags "-X github.com/hexagonal-operator/operator/internal/version.Version=v1.2.3"
package version
