package ports

import "time"

// Clock knows how to tell the time. Reconcilers and admission rules take it
// so tests can pin "now".
type Clock interface {
	Now() time.Time
}
