// Package certs owns the serving certificates of the operator's HTTPS
// servers, the webhook and the metrics server.
//
// A server takes a [Source]: it starts it before it listens, asks it on
// every TLS handshake (tls.Config.GetCertificate), and stops it after it
// stops serving. [Module] builds one per server from [Options]:
// [FileSource] reads files and reloads them when they change, as
// controller-runtime's certwatcher does (certwatcher_* counters);
// [SelfIssued] (webhook mode "self") issues, shares and rotates its own CA
// and certificate and keeps the CA bundle in every [CABundleTarget];
// [SelfSigned] makes a certificate in memory. [Certificates.Collector]
// exports their expiry in operator_certificate_expiry_timestamp_seconds{use}.
package certs
