// Package certs owns the serving certificates of the operator's HTTPS
// servers, the webhook server and the metrics server, as controller-runtime's
// certwatcher serves both of its own.
//
// A server takes a [Source]: it starts it before it listens, asks it on
// every TLS handshake (tls.Config.GetCertificate), and stops it once it has
// stopped serving. [Module] builds one per server from [Options] as
// [Certificates]:
//
//   - [FileSource] (the webhook's mode "external", the metrics server given
//     a folder) reads a certificate and key from files and re-reads them
//     every few seconds, swapping in a pair whose content changed and is
//     valid; Start fails when the pair is missing or invalid. Reads count in
//     certwatcher_read_certificate_total and
//     certwatcher_read_certificate_errors_total.
//   - [SelfIssued] (the webhook's mode "self") issues its own CA and serving
//     certificate, keeps them in a Secret shared by all replicas, rotates
//     them, and keeps the CA bundle in every [CABundleTarget]: the webhook
//     configurations and, through [CRDConversionTarget], the CRD's
//     conversion config.
//   - [SelfSigned] (the metrics server without a folder) makes a
//     certificate in memory at Start.
//
// [Certificates.Collector] exports their expiry in
// operator_certificate_expiry_timestamp_seconds{use}.
package certs
