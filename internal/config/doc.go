// Package config turns the operator's command line and environment into a
// validated Config.
//
// Flags follow kubebuilder's names (docs/reference.md lists them). Each flag
// can also be set through OPERATOR_<FLAG> (dashes become underscores, upper
// case); an explicit flag wins over the environment. Parsing never prints:
// it returns one error line naming the bad flag, and the caller decides how
// to report it, so tests can check every case.
package config
