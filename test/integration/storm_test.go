package integration_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/domain/replicaset"
	"github.com/hexagonal-operator/operator/test/controlplane"
)

// stormBackoff outlasts retry.DefaultRetry: ten writers sweeping the same
// object in step can each lose more than five races in a row.
var stormBackoff = wait.Backoff{Steps: 15, Duration: 5 * time.Millisecond, Factor: 1.5, Jitter: 1}

// stormTarget is one object the writers fight over.
type stormTarget struct {
	name  string
	res   dynamic.ResourceInterface
	chaos bool
}

// stormTally is what one writer did.
type stormTally struct {
	updates, conflicts int
}

func TestConflictStormKeepsEveryWrite(t *testing.T) {
	t.Parallel()
	e := startChaos(t, controlplane.Options{}, "--controllers=replicaset,chaospod")
	ctx := context.Background()
	const (
		ns          = "storm"
		replicaSets = 20
		chaosPods   = 5
		writers     = 10
		rounds      = 30
		perRound    = 2
	)
	require.NoError(t, e.cp.EnsureNamespace(ctx, ns))

	rsRes := e.dyn.Resource(appsv1.SchemeGroupVersion.WithResource("replicasets")).Namespace(ns)
	var targets []stormTarget
	for i := range replicaSets {
		rs := replicaSet(fmt.Sprintf("rs-%02d", i), nil)
		rs.Namespace = ns
		_, err := e.cs.AppsV1().ReplicaSets(ns).Create(ctx, rs, metav1.CreateOptions{})
		require.NoError(t, err)
		targets = append(targets, stormTarget{name: rs.Name, res: rsRes})
	}
	for i := range chaosPods {
		cp := chaosPodV1(fmt.Sprintf("chaos-%d", i), nil)
		// Long enough that few Pods are stopped while the storm lasts.
		cp.SetAnnotations(map[string]string{chaosv1.StopIntervalAnnotation: "30s"})
		_, err := e.v1(ns).Create(ctx, cp, metav1.CreateOptions{})
		require.NoError(t, err)
		targets = append(targets, stormTarget{name: cp.GetName(), res: e.v1(ns), chaos: true})
	}

	// The writers start at once, while the operator is still labeling
	// ReplicaSets and starting Pods: every write races the operator's and
	// the other writers'.
	every := make([]int, len(targets))
	for i := range every {
		every[i] = i
	}
	tallies := make([]stormTally, writers)
	errs := make([]error, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			<-start
			rng := rand.New(rand.NewPCG(uint64(w), 0))
			key := fmt.Sprintf("storm/w%d", w)
			for round := range rounds {
				// The last round writes everything, in the same order for
				// every writer, so each object ends with every writer's
				// last value and the writers collide on it.
				picks := every
				if round < rounds-1 {
					picks = rng.Perm(len(targets))[:perRound]
				}
				for _, i := range picks {
					conflicts, err := stormWrite(ctx, targets[i], key, strconv.Itoa(round))
					tallies[w].conflicts += conflicts
					if err != nil {
						errs[w] = fmt.Errorf("writer %d round %d: %w", w, round, err)
						return
					}
					tallies[w].updates++
				}
			}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	stormed := time.Now()

	want := strconv.Itoa(rounds - 1)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, target := range targets {
			obj, err := target.res.Get(ctx, target.name, metav1.GetOptions{})
			if !assert.NoError(c, err) {
				continue
			}
			for w := range writers {
				key := fmt.Sprintf("storm/w%d", w)
				assert.Equal(c, want, obj.GetLabels()[key], "label %s of %s", key, target.name)
				assert.Equal(c, want, obj.GetAnnotations()[key], "annotation %s of %s", key, target.name)
			}
			if target.chaos {
				e.checkStormedChaosPod(c, obj)
			} else {
				assert.Equal(c, replicaset.LabelValue, obj.GetLabels()[replicaset.LabelKey], "operator label of %s", target.name)
			}
		}
	}, 30*time.Second, 100*time.Millisecond)
	converged := time.Since(stormed)

	var total stormTally
	for _, tl := range tallies {
		total.updates += tl.updates
		total.conflicts += tl.conflicts
	}
	assert.Equal(t, writers*((rounds-1)*perRound+len(targets)), total.updates)
	assert.Positive(t, total.conflicts, "the writers never collided: the storm tested nothing")
	requeues := map[string]float64{}
	for _, name := range []string{"replicaset", "chaospod"} {
		// Conflicts are requeues (result="requeue"), not errors.
		assert.Zero(t, e.op.counter(t, "controller_runtime_reconcile_errors_total", map[string]string{"controller": name}), name)
		requeues[name] = e.op.counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": name, "result": "requeue"})
	}
	t.Logf("storm: %d writer updates, %d writer conflicts in %s; operator requeues: replicaset %.0f, chaospod %.0f; converged %s after the last write",
		total.updates, total.conflicts, stormed.Sub(began).Round(time.Millisecond),
		requeues["replicaset"], requeues["chaospod"], converged.Round(time.Millisecond))
}

// stormWrite sets key=value as a label and an annotation of target by Get
// and Update, again after each conflict, and counts the conflicts.
func stormWrite(ctx context.Context, target stormTarget, key, value string) (int, error) {
	conflicts := 0
	err := retry.RetryOnConflict(stormBackoff, func() error {
		obj, err := target.res.Get(ctx, target.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		labels, annotations := obj.GetLabels(), obj.GetAnnotations()
		if labels == nil {
			labels = map[string]string{}
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		labels[key], annotations[key] = value, value
		obj.SetLabels(labels)
		obj.SetAnnotations(annotations)
		_, err = target.res.Update(ctx, obj, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			conflicts++
		}
		return err
	})
	if err != nil {
		return conflicts, fmt.Errorf("set %s on %s: %w", key, target.name, err)
	}
	return conflicts, nil
}

// checkStormedChaosPod asserts the operator's writes to a ChaosPod survived
// the writers': its status names the run of the Pod it owns.
func (e *chaosEnv) checkStormedChaosPod(c *assert.CollectT, obj *unstructured.Unstructured) {
	lastRun, _, _ := unstructured.NestedString(obj.Object, "status", "lastRun")
	if !assert.NotEmpty(c, lastRun, "status.lastRun of %s", obj.GetName()) {
		return
	}
	pod, err := e.cs.CoreV1().Pods(obj.GetNamespace()).Get(context.Background(), obj.GetName(), metav1.GetOptions{})
	if !assert.NoError(c, err, "pod of %s", obj.GetName()) {
		return
	}
	owner := metav1.GetControllerOf(pod)
	if assert.NotNil(c, owner, "controller of pod %s", pod.Name) {
		assert.Equal(c, obj.GetUID(), owner.UID, "controller of pod %s", pod.Name)
	}
	assert.Equal(c, pod.CreationTimestamp.UTC().Format(time.RFC3339), lastRun, "status.lastRun of %s names its pod's run", obj.GetName())
}
