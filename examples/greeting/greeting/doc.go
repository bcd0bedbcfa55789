// Package greeting is the domain of the Greeting example: the controller
// that greets, and the admission rules that default and check a Greeting
// on its way into the cluster.
//
// # What it promises
//
//   - [Reconciler]: every Greeting's status.message reads
//     "<spec.salutation>, <spec.name>!" and status.observedGeneration is the
//     generation that message was written for. It writes the status only
//     when either differs, and records a Normal Event with reason
//     [ReasonGreeted] each time it does. The same message is the
//     [MessageKey] of a ConfigMap named like the Greeting, which the
//     Greeting controls (its owner reference): created when missing,
//     updated when it differs, and left alone, with a terminal error, when
//     another owner controls a ConfigMap of that name.
//   - [Defaulter]: a Greeting created or updated without a salutation gets
//     [DefaultSalutation].
//   - [Validator]: spec.name has 1 to [MaxNameLength] characters and
//     spec.salutation at most [MaxSalutationLength]; any other Greeting is
//     refused with a message that says which.
//
// Like the operator's own domain packages it knows only ports
// (internal/ports), API types (its api package, k8s.io/api,
// k8s.io/apimachinery) and the standard library; the tests hold it to that
// rule. The wiring that puts it in an operator is examples/greeting/main.go.
package greeting
