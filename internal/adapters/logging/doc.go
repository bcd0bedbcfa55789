// Package logging builds the operator's *zap.Logger from kubebuilder's
// --zap-* flags (sampled in production, as controller-runtime's) and sends
// the logs of the libraries underneath to it, so a deployment has one log
// stream in one format: klog (client-go) through go-logr/zapr
// ([RedirectKlog], [NewLogr]) with V-levels capped at [MaxLibraryVerbosity],
// and fx's own events through [FxLogger].
package logging
