// Package one is an adapter importing another adapter and the domain.
package one

import (
	"net/http"

	_ "example.com/violating/internal/adapters/two"
)

// Handler is an http.Handler.
type Handler struct{}

func (Handler) ServeHTTP(http.ResponseWriter, *http.Request) {}
