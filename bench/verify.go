package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reasonLabeled is the Event both operators record when they label a
// ReplicaSet.
const reasonLabeled = "Labeled"

// waitLabeledEvents waits until every one of the n ReplicaSets of ns has
// its Labeled Event, and fails naming how many are missing: a figure is
// only reported for an operator that did all of its work, Events included
// (they are written in the background, so they may trail the labels).
func (e *env) waitLabeledEvents(ctx context.Context, ns string, n int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	seen := 0
	for {
		list, err := e.cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			regarding := map[string]bool{}
			for _, ev := range list.Items {
				if ev.Reason == reasonLabeled && ev.Regarding.Kind == "ReplicaSet" {
					regarding[ev.Regarding.Name] = true
				}
			}
			if seen = len(regarding); seen >= n {
				return seen, nil
			}
		}
		select {
		case <-ctx.Done():
			return seen, fmt.Errorf("%d of %d ReplicaSets have their %s Event after %s", seen, n, reasonLabeled, e.opts.timeout)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
