// Command operator runs the hexagonal operator: the ReplicaSet and ChaosPod
// controllers, their admission and conversion webhooks, metrics and health
// probes. docs/reference.md lists its flags.
package main
