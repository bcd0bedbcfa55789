// Package rules breaks the dependency rule on purpose: the architecture test
// must catch it.
package rules

import (
	"net/http"

	"example.com/violating/internal/adapters/one"
	"example.com/violating/internal/ports"
)

// Handler exists to use the imports.
var Handler http.Handler = one.Handler{}

// Port exists to use the imports.
var Port ports.Port
