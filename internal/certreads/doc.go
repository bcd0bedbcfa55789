// Package certreads holds controller-runtime's certwatcher counters,
// certwatcher_read_certificate_total and
// certwatcher_read_certificate_errors_total, for every server of the
// operator that reads a certificate and key from files (the webhook and the
// metrics servers). Both count into the same two series, as the servers of
// a controller-runtime manager do.
//
// It is a library, not an adapter: it knows no port.
package certreads
