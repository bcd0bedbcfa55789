// Package lifecycle states, in one place, the order in which the operator's
// parts start and stop.
//
// Every part with a lifecycle (a server, the informers, the elector, a
// controller, a start-up check) is registered as a [Part] in the fx value
// group [Group], with the [Phase] it belongs to; [Run] appends their hooks
// to fx's lifecycle phase by phase. fx then starts them in that order and
// stops them in reverse, so the order is read off the Phase constants
// rather than inferred from which constructor fx happened to run first.
// Registering a part also makes fx build it: no invoke is needed to pull a
// server into the graph.
package lifecycle
