// Package logging builds the operator's *zap.Logger from kubebuilder's
// --zap-* flags, and sends the logs of the libraries underneath (client-go's
// klog, fx's own events) to it, so a deployment has one log stream in one
// format.
//
// # Levels
//
// [Options.Level] takes kubebuilder's values: "debug", "info", "error", or an
// integer verbosity n that shows logr's V(0)..V(n), i.e. zap levels down to
// -n. The operator logs at two levels only, info and debug; client-go's
// finer V-levels appear from --zap-log-level=2 and up, and stop at
// [MaxLibraryVerbosity] (5) whatever the flag says: from V(6) client-go logs
// each request's URL and headers, from V(8) the request and response bodies,
// which carry the bearer tokens of TokenReviews and the private keys of the
// webhook's Secret. The cap sits in the logr sink's Enabled, which every
// V-check of klog and of a contextual logger reaches.
//
// # client-go
//
// client-go logs through klog. [RedirectKlog] points klog, once per
// process, at a logr sink over zap ([NewLogr] is the same sink for a fixed
// logger), and attaches a logger to it; the Module does this in OnStart and
// detaches in OnStop. klog being process-global, the bridge is too: it is
// written so that several applications in one test process can attach and
// detach without a data race (the newest attached logger gets the lines).
//
// # fx
//
// [FxLogger] is the fx.Option for the composition root that logs fx's
// events through the same logger.
package logging
