// Package two is a plain adapter.
package two
