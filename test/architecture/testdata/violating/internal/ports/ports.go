// Package ports is allowed to be imported by the domain.
package ports

// Port is a port.
type Port interface{ Do() }
