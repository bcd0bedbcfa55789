// Command operator runs the hexagonal operator: the ReplicaSet and ChaosPod
// controllers, their admission and conversion webhooks, metrics and health
// probes. See the README for flags.
package main
