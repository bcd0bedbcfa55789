package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reasonLabeled is the Event both operators record when they label a
// ReplicaSet.
const reasonLabeled = "Labeled"

// listPage is how many objects one list request asks for: the scale
// workload's namespaces hold tens of thousands, too many for one answer.
const listPage = 5000

// waitLabeledEvents waits until every one of the n ReplicaSets of ns has
// its Labeled Event, and fails naming how many are missing: a figure is
// only reported for an operator that did all of its work, Events included
// (they are written in the background, so they may trail the labels).
func (e *env) waitLabeledEvents(ctx context.Context, ns string, n int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	// Listing thousands of Events loads the API server; poll less often
	// the more there are.
	interval := max(250*time.Millisecond, time.Duration(n/20)*time.Millisecond)
	seen := 0
	for {
		if regarding, err := e.labeledEvents(ctx, ns); err == nil {
			if seen = len(regarding); seen >= n {
				return seen, nil
			}
		}
		select {
		case <-ctx.Done():
			return seen, fmt.Errorf("%d of %d ReplicaSets have their %s Event after %s", seen, n, reasonLabeled, e.opts.timeout)
		case <-time.After(interval):
		}
	}
}

// labeledEvents lists the Events of ns page by page and returns the names
// of the ReplicaSets a Labeled Event regards.
func (e *env) labeledEvents(ctx context.Context, ns string) (map[string]bool, error) {
	regarding := map[string]bool{}
	opts := metav1.ListOptions{Limit: listPage}
	for {
		list, err := e.cs.EventsV1().Events(ns).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for _, ev := range list.Items {
			if ev.Reason == reasonLabeled && ev.Regarding.Kind == "ReplicaSet" {
				regarding[ev.Regarding.Name] = true
			}
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return regarding, nil
		}
	}
}

// replicaSetLabels lists the ReplicaSets of ns page by page and says for
// each whether it carries the label.
func (e *env) replicaSetLabels(ctx context.Context, ns string) (map[string]bool, error) {
	listed, err := e.listReplicaSets(ctx, ns)
	if err != nil {
		return nil, err
	}
	labeled := make(map[string]bool, len(listed))
	for _, rs := range listed {
		labeled[rs.Name] = rs.Labels[labelKey] == labelValue
	}
	return labeled, nil
}

// listReplicaSets lists the ReplicaSets of ns a page at a time.
func (e *env) listReplicaSets(ctx context.Context, ns string) ([]*appsv1.ReplicaSet, error) {
	var out []*appsv1.ReplicaSet
	opts := metav1.ListOptions{Limit: listPage}
	for {
		list, err := e.cs.AppsV1().ReplicaSets(ns).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list replicasets in %s: %w", ns, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			return out, nil
		}
	}
}
