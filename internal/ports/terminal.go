package ports

import "errors"

// terminalError marks an error that no retry can fix.
type terminalError struct{ err error }

func (e *terminalError) Error() string { return "terminal error: " + e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }

// Terminal wraps err so that the controller loop reports it once and does not
// requeue the request. Terminal(nil) is nil.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

// IsTerminal reports whether err, or any error it wraps, was marked with
// [Terminal].
func IsTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}
