// Package architecture checks the hexagon's dependency rule on this module:
// the domain knows only ports, api types and the standard library; ports
// know only api; adapters do not know each other or the domain; nothing
// depends on controller-runtime or k8s.io/kubernetes.
//
// The rule runs as an ordinary test (`go test ./test/architecture`), so a
// forbidden import fails `make test` and `make lint` like any broken test.
package architecture
