package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
	"github.com/hexagonal-operator/operator/internal/adapters/leaderelection"
	"github.com/hexagonal-operator/operator/internal/domain/chaospod"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/node"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

// A stop that falls due while the Lease changes hands waits for the next
// leader: the holder releases the Lease on SIGTERM, a standby tries again
// within RetryPeriod × (1 + JitterFactor) (4.4 s), and it starts its
// controllers on caches it kept warm, whose first reconcile of an overdue
// ChaosPod is the stop. A second covers that start and the DELETE on two
// busy cores. Outside a hand-over stops are tens of milliseconds late
// (docs/performance.md).
var stopBound = time.Duration(float64(leaderelection.DefaultRetryPeriod)*(1+leaderelection.JitterFactor)) + time.Second

// A stop seen before its nextStop is early. The operator, the API server
// and the test read one clock and nextStop has whole seconds, so a stop of
// the wrong run would be early by a second or more; half a second covers
// the operator's requeue timer.
const earlyTolerance = 500 * time.Millisecond

// The user's objects the upgrade must keep, in userNS.
var (
	upgradeReplicaSets = []string{"catalog", "checkout"}
	// name → version written in, and the stop interval ("" leaves a v1
	// ChaosPod to the operator's coin: 10 s or 20 s per run).
	upgradeChaosPods = []struct{ name, version, interval string }{
		{"chaos-v1-a", "v1", "8s"},
		{"chaos-v1-coin", "v1", ""},
		{"chaos-v2-a", "v2", "9s"},
		{"chaos-v2-b", "v2", "12s"},
	}
)

// TestUpgradeFromThePreviousRelease deploys the previous release (the
// newest of CHANGELOG.md, built from the commit it was cut at) as users do,
// gives it ReplicaSets and ChaosPods written at v1 and v2, then upgrades
// to this commit and downgrades back, each time by the steps
// docs/upgrading.md gives, under Pod creation: no admission may fail, no
// user object may change, no ChaosPod's Pod may be stopped off its
// schedule, the Lease may change hands only when its holder's Pod stops,
// and afterwards the cluster holds exactly the objects of the release
// deployed.
func TestUpgradeFromThePreviousRelease(t *testing.T) {
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	current, releases, err := operatortest.Releases(root)
	require.NoError(t, err)
	require.NotEmpty(t, releases, "CHANGELOG.md records no release to upgrade from")
	prev := releases[0]
	c, ctx, cs, dyn := nodeWithOperatorImage(t, 25*time.Minute)

	upgrade := docSteps(t, root, "# from "+prev.Version+" to "+current)
	downgrade := docSteps(t, root, "# from "+current+" back to "+prev.Version)

	// The previous release's tree, binary and image (this commit's image came with the node).
	began := time.Now()
	oldTree := releaseTree(ctx, t, root, prev)
	_, err = makeIn(ctx, c, oldTree, 10*time.Minute, "build", "VERSION="+prev.Version)
	require.NoError(t, err)
	oldIMG := "hexagonal-operator:" + prev.Version
	require.NoError(t, c.ImportImage(ctx, "operator-"+prev.Version, func(context.Context) (node.Image, error) {
		img, err := node.OperatorImage(filepath.Join(oldTree, "bin", "operator"))
		img.Ref = imageRef(oldIMG)
		return img, err
	}))
	t.Logf("figure: release %s (commit %s) built from its tree and imported as %s in %s", prev.Version, prev.Commit[:12], oldIMG, time.Since(began).Round(100*time.Millisecond))

	// The previous release, deployed with its own make deploy.
	began = time.Now()
	_, err = makeIn(ctx, c, oldTree, 3*time.Minute, "deploy", "IMG="+oldIMG)
	require.NoError(t, err)
	waitAvailable(ctx, t, cs, 2, 3*time.Minute)
	webhooksAnswer(ctx, t, cs, dyn)
	t.Logf("figure: %s: make deploy → Deployment %s Available 2/2, webhooks answering, in %s", prev.Version, opDeployment, time.Since(began).Round(100*time.Millisecond))

	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	schedules, err := watchSchedules(watchCtx, cs, dyn, userNS, stopBound)
	require.NoError(t, err)
	began = time.Now()
	createUpgradeWorkload(ctx, t, cs, dyn)
	waitReconciled(ctx, t, cs, dyn, upgradeReplicaSets)
	before := snapshot(ctx, t, cs, dyn)
	t.Logf("figure: %s: %d ReplicaSets labeled and %d ChaosPods (v1 and v2) running on schedule in %s", prev.Version,
		len(upgradeReplicaSets), len(upgradeChaosPods), time.Since(began).Round(100*time.Millisecond))

	leases, err := watchLease(watchCtx, cs)
	require.NoError(t, err)
	operators := watchOperatorPods(watchCtx, cs)
	conversions := probeConversion(watchCtx, dyn, userNS, upgradeChaosPods[0].name)

	ok := t.Run("upgrade", func(t *testing.T) {
		roll(ctx, t, c, cs, dyn, rollout{
			from: prev.Version, to: current, fromRef: imageRef(oldIMG), toRef: node.OperatorRef, fromTree: oldTree, toTree: root,
			steps: upgrade, before: before, schedules: schedules, leases: leases, operators: operators, conversions: conversions,
			deploy:        func() error { _, err := c.Make(ctx, "deploy"); return err },
			newReplicaSet: "after-upgrade",
		})
	})
	ok = ok && t.Run("downgrade", func(t *testing.T) {
		roll(ctx, t, c, cs, dyn, rollout{
			from: current, to: prev.Version, fromRef: node.OperatorRef, toRef: imageRef(oldIMG), fromTree: root, toTree: oldTree,
			steps: downgrade, before: before, schedules: schedules, leases: leases, operators: operators, conversions: conversions,
			deploy: func() error {
				_, err := makeIn(ctx, c, oldTree, 3*time.Minute, "deploy", "IMG="+oldIMG)
				return err
			},
			newReplicaSet: "after-downgrade",
		})
	})
	stopWatching()
	if missing := unknownTo(t, root, oldTree); ok && len(missing) > 0 {
		ok = t.Run("a Ready reason "+prev.Version+" does not know", func(t *testing.T) {
			strandedByAnUnknownReason(ctx, t, c, cs, dyn, prev.Version, imageRef(oldIMG), oldTree, missing[0], downgrade)
		})
	}
	if !ok {
		t.FailNow()
	}

	// Uninstall as after any release: the ChaosPods first, then the
	// deployed release's make undeploy, which leaves nothing of it. The
	// images and the release's tree go with the cluster and the test's
	// folders.
	require.NoError(t, dyn.Resource(chaosv1.GroupVersionResource).Namespace(userNS).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}))
	require.True(t, eventually(ctx, time.Minute, 250*time.Millisecond, func() bool {
		pods, err := cs.CoreV1().Pods(userNS).List(ctx, metav1.ListOptions{LabelSelector: chaospod.PodLabel})
		return err == nil && len(pods.Items) == 0
	}), "the ChaosPods' Pods outlived them by a minute%s", podSummary(ctx, cs, userNS))
	began = time.Now()
	_, err = makeIn(ctx, c, oldTree, 3*time.Minute, "undeploy")
	require.NoError(t, err)
	var left []string
	gone := eventually(ctx, 2*time.Minute, 500*time.Millisecond, func() bool {
		left = nil
		out, err := c.Kubectl(ctx, "get", "namespaces,customresourcedefinitions,clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings,priorityclasses", "-o", "name")
		if err != nil {
			return false
		}
		for _, name := range strings.Fields(out) {
			if strings.Contains(name, "hexagonal-operator") || strings.Contains(name, "chaosapps") {
				left = append(left, name)
			}
		}
		return len(left) == 0
	})
	require.True(t, gone, "after %s's make undeploy: %v left", prev.Version, left)
	t.Logf("figure: %s: make undeploy → nothing of the operator's left in %s", prev.Version, time.Since(began).Round(100*time.Millisecond))
}

// rollout is one move from the release deployed to another.
type rollout struct {
	from, to string
	// fromRef and toRef are the images of the release deployed and of the
	// one rolled to, as containerd names them.
	fromRef, toRef string
	// fromTree and toTree are the checkouts of the two releases: the
	// cluster must hold toTree's config/default afterwards.
	fromTree, toTree string
	steps            []string
	deploy           func() error
	before           map[string]string
	schedules        *scheduleWatch
	leases           *leaseWatch
	operators        *operatorPods
	conversions      *conversionProbe
	newReplicaSet    string
}

// roll moves the operator from one release to another by the steps of
// docs/upgrading.md, the first (make deploy) under Pod creation, and holds
// the cluster to what an upgrade promises.
func roll(ctx context.Context, t *testing.T, c *node.Cluster, cs kubernetes.Interface, dyn dynamic.Interface, r rollout) {
	lease, err := cs.CoordinationV1().Leases(opNamespace).Get(ctx, opLease, metav1.GetOptions{})
	require.NoError(t, err)
	transitionsBefore := ptrValue(lease.Spec.LeaseTransitions)
	oldPods := podNames(ctx, t, cs)
	convOK, convFailed, _ := r.conversions.counts()
	began := time.Now()

	require.Equal(t, "make deploy", r.steps[0], "docs/upgrading.md: the first step is make deploy")
	underPodCreation(ctx, t, c, cs, fmt.Sprintf("%s → %s (make deploy)", r.from, r.to), r.deploy)
	for _, step := range r.steps[1:] {
		runStep(ctx, t, c, step)
	}
	for _, p := range podNames(ctx, t, cs) {
		pod, err := cs.CoreV1().Pods(opNamespace).Get(ctx, p, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, r.toRef, imageRef(pod.Spec.Containers[0].Image), "Pod %s after the rollout", p)
	}

	// The cluster holds the objects of the release rolled to: every one
	// of its config/default, and none of the operator's besides.
	sameObjects(ctx, t, c, r.toTree)

	// The Lease changed hands only when its holder's Pod was stopping,
	// and ended with a Pod of the new release. The rollout replaces the
	// two old Pods one at a time (maxSurge 1, maxUnavailable 0); each, if
	// it leads when it stops, hands the Lease to whichever replica takes
	// it first: a new one, or the other old one, which then hands it on
	// when it stops in turn. So the Lease moves once or twice.
	lease, err = cs.CoordinationV1().Leases(opNamespace).Get(ctx, opLease, metav1.GetOptions{})
	require.NoError(t, err)
	transitions := ptrValue(lease.Spec.LeaseTransitions) - transitionsBefore
	holders := r.leases.since(began)
	var names []string
	for _, h := range holders {
		names = append(names, h.pod)
	}
	require.NotEmpty(t, holders)
	assert.EqualValues(t, len(holders)-1, transitions, "leaseTransitions counts each holder seen: %v", names)
	assert.Contains(t, []int32{1, 2}, transitions, "the Lease moved %d times: %v", transitions, names)
	for i, h := range holders {
		switch {
		case i == 0:
			assert.Contains(t, oldPods, h.pod, "the leader before the rollout")
		case i == len(holders)-1:
			assert.NotContains(t, oldPods, h.pod, "the last leader is a Pod of %s", r.to)
		default:
			assert.Contains(t, oldPods, h.pod, "a leader in between is the other old Pod")
		}
		if i > 0 {
			stopping := r.operators.deletedAt(holders[i-1].pod)
			assert.False(t, stopping.IsZero() || stopping.After(h.at.Add(time.Second)),
				"%s took the Lease at %s while its holder %s was not stopping (deletion seen %s)", h.pod, h.at.Format(time.StampMilli), holders[i-1].pod, stopping.Format(time.StampMilli))
		}
	}

	// Writes refused while both releases ran, of two kinds only. The
	// release rolled to brings its admission policies before its Pods
	// start, and they refuse a Ready reason they do not know: a release
	// rolled from that writes reasons the other lacks has those writes
	// refused until it stops leading; they are retried, and a Pod's
	// Ready condition only lags. And an updated CRD makes the API server
	// read the ChaosPods again, the params of the template policy, which
	// meanwhile refuses the operator's Pods for a moment; their creates
	// are retried with back-off, so the next Pod of a ChaosPod starts a
	// moment later.
	missing := unknownTo(t, r.fromTree, r.toTree)
	refusals, unexpected := 0, 0
	var paramsFirst, paramsLast string
	for _, img := range []string{r.fromRef, r.toRef} {
		// Pods of the release deployed before the last rollout logged
		// their own refusals then.
		since := began.Truncate(time.Second)
		for pod, lines := range r.operators.logLines(img, func(l string) bool {
			ts, err := time.Parse(time.RFC3339, logTime(l))
			return refused(l) && err == nil && !ts.Before(since)
		}) {
			refusals += len(lines)
			for _, l := range lines {
				switch {
				case strings.Contains(l, paramsRefusal):
					ts := logTime(l)
					if paramsFirst == "" || ts < paramsFirst {
						paramsFirst = ts
					}
					paramsLast = max(paramsLast, ts)
				case img == r.fromRef && len(missing) > 0 && strings.Contains(l, readyRefusal):
				default:
					if unexpected++; unexpected <= 5 {
						t.Errorf("a write of %s refused: %s", pod, shorten(l, 1000))
					}
				}
			}
			t.Logf("figure: %s → %s: %s (%s) had %d writes refused, from %s to %s; the first: %s",
				r.from, r.to, pod, img, len(lines), logTime(lines[0]), logTime(lines[len(lines)-1]), logError(lines[0]))
		}
	}
	if paramsFirst != "" {
		first, _ := time.Parse(time.RFC3339, paramsFirst)
		last, _ := time.Parse(time.RFC3339, paramsLast)
		assert.LessOrEqual(t, last.Sub(first), stopBound, "the template policy refused the operator's Pods from %s to %s", paramsFirst, paramsLast)
	}

	// What users wrote is unchanged, read at v1 and at v2; every ChaosPod
	// runs another full cycle on the new release; a new ReplicaSet is
	// labeled by the new leader.
	waitReconciled(ctx, t, cs, dyn, upgradeReplicaSets)
	after := snapshot(ctx, t, cs, dyn)
	for _, k := range slices.Sorted(maps.Keys(r.before)) {
		assert.JSONEq(t, r.before[k], after[k], "%s after %s → %s", k, r.from, r.to)
	}
	cycled := time.Now()
	require.Eventually(t, func() bool {
		n := r.schedules.stopsOf(cycled)
		for _, cp := range upgradeChaosPods {
			if n[cp.name] < 1 {
				return false
			}
		}
		return true
	}, 90*time.Second, 250*time.Millisecond, "every ChaosPod is stopped again on %s", r.to)
	waitReconciled(ctx, t, cs, dyn, upgradeReplicaSets)
	createReplicaSet(ctx, t, cs, r.newReplicaSet)
	waitReconciled(ctx, t, cs, dyn, []string{r.newReplicaSet})
	reasons := readyReasons(t, r.toTree)
	for _, cp := range upgradeChaosPods {
		o, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(userNS).Get(ctx, cp.name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Contains(t, reasons, readyReason(o), "ChaosPod %s: Ready's reason is one %s writes", cp.name, r.to)
	}

	// No Pod stopped off its schedule from the rollout on.
	stops, overdue := r.schedules.since(began)
	var late time.Duration
	var early []string
	for _, s := range stops {
		late = max(late, s.lateness())
		if s.lateness() < -earlyTolerance {
			early = append(early, fmt.Sprintf("%s: stopped %s before its nextStop %s", s.chaos, -s.lateness(), s.nextStop.UTC().Format(time.RFC3339)))
		}
		if s.lateness() > stopBound {
			overdue = append(overdue, fmt.Sprintf("%s: stopped %s after its nextStop %s", s.chaos, s.lateness().Round(time.Millisecond), s.nextStop.UTC().Format(time.RFC3339)))
		}
	}
	assert.Empty(t, early, "stops before their nextStop")
	assert.Empty(t, overdue, "stops more than %s after their nextStop", stopBound)
	gap := r.schedules.maxGap(began)
	assert.LessOrEqual(t, gap, stopBound, "a ChaosPod was without its Pod for %s", gap)

	ok, failed, failures := r.conversions.counts()
	assert.Zero(t, failed-convFailed, "v2 reads through /convert failed: %v", failures)
	t.Logf("figure: %s → %s: Lease moved %d times (%s), each when its holder stopped; %d stops since, the latest %s after its nextStop (bound %s), none early; a ChaosPod without its Pod %s at most; %d v2 reads through /convert, %d failed; %d writes refused",
		r.from, r.to, transitions, strings.Join(names, " → "), len(stops), late.Round(time.Millisecond), stopBound,
		gap.Round(100*time.Millisecond), ok-convOK, failed-convFailed, refusals)
}

// docSteps returns the commands of the fenced block of docs/upgrading.md
// whose first line is first: "make deploy" for its make deploy line, the
// kubectl lines (a line ending in | or \ goes on on the next) as they are.
// Any other command fails the test, so the guide and what the test does
// cannot part.
func docSteps(t *testing.T, root, first string) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "upgrading.md"))
	require.NoError(t, err)
	_, rest, found := strings.Cut(string(doc), "\n"+first+"\n")
	require.True(t, found, "docs/upgrading.md has no block starting %q", first)
	body, _, found := strings.Cut(rest, "\n```")
	require.True(t, found, "the block starting %q ends", first)
	var steps []string
	var cont string
	for line := range strings.Lines(body) {
		line = cont + strings.TrimSpace(line)
		if cont = ""; strings.HasSuffix(line, "|") || strings.HasSuffix(line, "\\") {
			cont = strings.TrimSuffix(line, "\\") + " "
			continue
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "make deploy IMG="):
			steps = append(steps, "make deploy")
		case strings.HasPrefix(line, "kubectl "):
			steps = append(steps, line)
		default:
			t.Fatalf("docs/upgrading.md, block %q: a step the test cannot take: %s", first, line)
		}
	}
	require.NotEmpty(t, steps)
	return steps
}

// runStep runs a kubectl step of docs/upgrading.md as a user's shell
// would, with the kubectl `make tools` builds on the PATH.
func runStep(ctx context.Context, t *testing.T, c *node.Cluster, step string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", step)
	cmd.Env = append(os.Environ(), "PATH="+c.Bin+":"+os.Getenv("PATH"), "KUBECONFIG="+c.CP.KubeconfigPath)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "docs/upgrading.md: %s\n%s", step, out)
	t.Logf("%s\n%s", step, strings.TrimSpace(string(out)))
}

// releaseTree unpacks the tree of release r from the repository's history
// into a folder the test removes.
func releaseTree(ctx context.Context, t *testing.T, root string, r operatortest.Release) string {
	t.Helper()
	dir := t.TempDir()
	archive := exec.CommandContext(ctx, "git", "archive", r.Commit)
	archive.Dir = root
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	require.NoError(t, err)
	untar.Stdin = pipe
	var stderr strings.Builder
	archive.Stderr, untar.Stderr = &stderr, &stderr
	require.NoError(t, untar.Start())
	require.NoError(t, archive.Run(), "git archive %s: %s", r.Commit, stderr.String())
	require.NoError(t, untar.Wait(), "tar: %s", stderr.String())
	return dir
}

// makeIn runs a make target in the tree dir against the cluster, with the
// kubectl `make tools` builds, as Cluster.Make does in this one.
func makeIn(ctx context.Context, c *node.Cluster, dir string, timeout time.Duration, target string, vars ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := append([]string{"--no-print-directory", target, "KUBECTL=" + filepath.Join(c.Bin, "kubectl")}, vars...)
	cmd := exec.CommandContext(ctx, "make", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.CP.KubeconfigPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("make %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out), nil
}

// webhooksAnswer waits until the Pod webhooks annotate a Pod and the
// ChaosPod webhooks default a v2 ChaosPod (both dry runs): the API server
// trusts the operator's CA a moment after the operator writes it.
func webhooksAnswer(ctx context.Context, t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: userNS}}, metav1.CreateOptions{})
	require.NoError(t, err)
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	var last error
	answered := eventually(ctx, time.Minute, 500*time.Millisecond, func() bool {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: userNS},
			Spec: corev1.PodSpec{Containers: []corev1.Container{pauseContainer()}}}
		got, err := cs.CoreV1().Pods(userNS).Create(ctx, pod, dry)
		if last = err; err != nil {
			return false
		}
		if got.Annotations["example-mutating-admission-webhook"] != "foo" {
			last = fmt.Errorf("pod not annotated: %v", got.Annotations)
			return false
		}
		cp, err := dyn.Resource(chaosv2.GroupVersionResource).Namespace(userNS).Create(ctx, chaosPodObject(userNS, "probe", "v2", ""), dry)
		if last = err; err != nil {
			return false
		}
		interval, _, _ := unstructured.NestedString(cp.Object, "spec", "stop", "interval")
		last = fmt.Errorf("v2 ChaosPod not defaulted: interval %q", interval)
		return interval != ""
	})
	require.True(t, answered, "the webhooks do not answer: %v", last)
}

// chaosPodObject is a ChaosPod written at version: a pause Pod, labels and
// an annotation of the user's own, and the stop interval when given.
func chaosPodObject(ns, name, version, interval string) *unstructured.Unstructured {
	podSpec := map[string]any{
		"terminationGracePeriodSeconds": int64(1),
		"containers": []any{map[string]any{
			"name": "pause", "image": node.PauseImage,
			"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": int64(65535), "allowPrivilegeEscalation": false},
		}},
	}
	template := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": name}, "annotations": map[string]any{"owner": "team-chaos"}},
		"spec":     podSpec,
	}
	meta := map[string]any{
		"name": name, "namespace": ns,
		"labels":      map[string]any{"team": "chaos"},
		"annotations": map[string]any{"note": "written by a user"},
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": chaosv1.GroupName + "/" + version, "kind": chaosv1.Kind, "metadata": meta,
	}}
	switch version {
	case "v1":
		if interval != "" {
			meta["annotations"].(map[string]any)[chaosv1.StopIntervalAnnotation] = interval
		}
		obj.Object["spec"] = map[string]any{"template": template}
	default:
		stop := map[string]any{}
		if interval != "" {
			stop["interval"] = interval
		}
		obj.Object["spec"] = map[string]any{"podTemplate": template, "stop": stop}
	}
	return obj
}

func createReplicaSet(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	labels := map[string]string{"app": name}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: userNS, Labels: map[string]string{"app": name, "team": "shop"},
			Annotations: map[string]string{"note": "written by a user"}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{pauseContainer()}, TerminationGracePeriodSeconds: ptr.To[int64](1)},
			},
		},
	}
	_, err := cs.AppsV1().ReplicaSets(userNS).Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err)
}

func createUpgradeWorkload(ctx context.Context, t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface) {
	t.Helper()
	for _, name := range upgradeReplicaSets {
		createReplicaSet(ctx, t, cs, name)
	}
	for _, cp := range upgradeChaosPods {
		gvr := chaosv1.GroupVersionResource
		if cp.version == "v2" {
			gvr = chaosv2.GroupVersionResource
		}
		_, err := dyn.Resource(gvr).Namespace(userNS).Create(ctx, chaosPodObject(userNS, cp.name, cp.version, cp.interval), metav1.CreateOptions{})
		require.NoError(t, err, "create ChaosPod %s at %s", cp.name, cp.version)
	}
}

// waitReconciled waits until each ReplicaSet is labeled hello=world with
// its Pod annotated and Running, and each ChaosPod's Pod runs, recorded in
// status.lastRun, with a nextStop after it.
func waitReconciled(ctx context.Context, t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface, replicaSets []string) {
	t.Helper()
	var state string
	reconciled := eventually(ctx, 2*time.Minute, 250*time.Millisecond, func() bool {
		for _, name := range replicaSets {
			rs, err := cs.AppsV1().ReplicaSets(userNS).Get(ctx, name, metav1.GetOptions{})
			if err != nil || rs.Labels["hello"] != "world" {
				state = fmt.Sprintf("ReplicaSet %s not labeled (%v)", name, err)
				return false
			}
			pods, err := cs.CoreV1().Pods(userNS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
			if err != nil || len(pods.Items) != 1 || pods.Items[0].Status.Phase != corev1.PodRunning ||
				pods.Items[0].Annotations["example-mutating-admission-webhook"] != "foo" {
				state = fmt.Sprintf("ReplicaSet %s: its Pod not annotated and Running", name)
				return false
			}
		}
		for _, cp := range upgradeChaosPods {
			o, err := dyn.Resource(chaosv1.GroupVersionResource).Namespace(userNS).Get(ctx, cp.name, metav1.GetOptions{})
			if err != nil {
				state = err.Error()
				return false
			}
			pod, err := cs.CoreV1().Pods(userNS).Get(ctx, cp.name, metav1.GetOptions{})
			if err != nil || pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
				state = fmt.Sprintf("ChaosPod %s: its Pod not Running (%v)", cp.name, err)
				return false
			}
			last, okLast := nestedTime(o, "status", "lastRun")
			next, okNext := nestedTime(o, "spec", "nextStop")
			if !okLast || !last.Equal(pod.CreationTimestamp.Time) || !okNext || !next.After(last) {
				state = fmt.Sprintf("ChaosPod %s: lastRun %v nextStop %v, its Pod created %s", cp.name, last, next, pod.CreationTimestamp.UTC())
				return false
			}
		}
		return true
	})
	require.True(t, reconciled, "not reconciled within 2 minutes: %s", state)
}

// snapshot is what users wrote, by object: each ReplicaSet's labels,
// annotations and spec, and each ChaosPod's labels, annotations and spec
// read at v1 and at v2, without the stop the operator moves (v1
// spec.nextStop, v2 spec.stop.at).
func snapshot(ctx context.Context, t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface) map[string]string {
	t.Helper()
	out := map[string]string{}
	encode := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	for _, name := range upgradeReplicaSets {
		rs, err := cs.AppsV1().ReplicaSets(userNS).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		out["replicaset/"+name] = encode(map[string]any{"labels": rs.Labels, "annotations": rs.Annotations, "spec": rs.Spec})
	}
	for _, cp := range upgradeChaosPods {
		for _, gvr := range []struct {
			version string
			stop    []string
		}{{"v1", []string{"spec", "nextStop"}}, {"v2", []string{"spec", "stop", "at"}}} {
			res := chaosv1.GroupVersionResource
			if gvr.version == "v2" {
				res = chaosv2.GroupVersionResource
			}
			o, err := dyn.Resource(res).Namespace(userNS).Get(ctx, cp.name, metav1.GetOptions{})
			require.NoError(t, err)
			spec, _, _ := unstructured.NestedMap(o.Object, "spec")
			u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
			unstructured.RemoveNestedField(u.Object, gvr.stop...)
			out["chaospod/"+cp.name+"@"+gvr.version] = encode(map[string]any{"labels": o.GetLabels(), "annotations": o.GetAnnotations(), "spec": u.Object["spec"]})
		}
	}
	return out
}

func podNames(ctx context.Context, t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	pods, err := cs.CoreV1().Pods(opNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var names []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	return names
}

// sameObjects holds the cluster to the config/default of tree: each of its
// objects is there, and no object labeled as the operator's is there
// besides (kubectl apply does not prune what a release dropped).
func sameObjects(ctx context.Context, t *testing.T, c *node.Cluster, tree string) {
	t.Helper()
	rendered, err := c.Kubectl(ctx, "kustomize", filepath.Join(tree, "config", "default"))
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "default.yaml")
	require.NoError(t, os.WriteFile(file, []byte(rendered), 0o600))
	out, err := c.Kubectl(ctx, "get", "-f", file, "-o", "name")
	require.NoError(t, err, "an object of %s/config/default is missing", filepath.Base(tree))
	want := strings.Fields(out)
	const label = "app.kubernetes.io/name=hexagonal-operator"
	cluster, err := c.Kubectl(ctx, "get", "namespaces,customresourcedefinitions,clusterroles,clusterrolebindings,priorityclasses,validatingadmissionpolicies,validatingadmissionpolicybindings,mutatingwebhookconfigurations,validatingwebhookconfigurations", "-l", label, "-o", "name")
	require.NoError(t, err)
	namespaced, err := c.Kubectl(ctx, "-n", opNamespace, "get", "deployments,services,serviceaccounts,roles,rolebindings,poddisruptionbudgets,configmaps", "-l", label, "-o", "name")
	require.NoError(t, err)
	var extra []string
	for _, name := range strings.Fields(cluster + "\n" + namespaced) {
		if !slices.Contains(want, name) {
			extra = append(extra, name)
		}
	}
	assert.Empty(t, extra, "labeled %s and not in the release's config/default", label)
}

// readyReasons are the Ready reasons the tree's api/chaos/v1 declares.
func readyReasons(t *testing.T, tree string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(tree, "api", "chaos", "v1", "conditions.go"))
	require.NoError(t, err)
	var reasons []string
	for _, m := range regexp.MustCompile(`(?m)^\s*Reason\w+\s*=\s*"(\w+)"`).FindAllStringSubmatch(string(src), -1) {
		reasons = append(reasons, m[1])
	}
	require.NotEmpty(t, reasons)
	return reasons
}

// imageRef is img as containerd names it: Docker Hub's library for a bare
// name.
func imageRef(img string) string {
	if strings.Contains(strings.SplitN(img, ":", 2)[0], "/") {
		return img
	}
	return "docker.io/library/" + img
}

// unknownTo are the Ready reasons of the release in from that the one in
// to does not declare.
func unknownTo(t *testing.T, from, to string) []string {
	t.Helper()
	known := readyReasons(t, to)
	return slices.DeleteFunc(readyReasons(t, from), func(reason string) bool { return slices.Contains(known, reason) })
}

// paramsRefusal is what an admission policy with parameters says while
// the API server has not (re)read them: the template policy's are the
// ChaosPods, read again whenever their CRD changes.
const paramsRefusal = "no params found for policy binding"

// logTime is the "ts" of an operator's log line (RFC 3339, seconds).
func logTime(line string) string { return logField(line).TS }

// logError is the "error" of an operator's log line.
func logError(line string) string { return logField(line).Error }

func logField(line string) (entry struct{ TS, Error string }) {
	_ = json.Unmarshal([]byte(line), &entry)
	return entry
}

// readyRefusal is what the self-confinement policy says when it refuses a
// Ready reason it does not know.
const readyRefusal = "the operator may only write a ChaosPod's Ready condition, with a reason of its own"

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func readyReason(o *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == chaosv1.ConditionReady {
			reason, _ := m["reason"].(string)
			return reason
		}
	}
	return ""
}

// strandedByAnUnknownReason: a ChaosPod whose Ready condition holds a
// reason the release deployed does not know (one the later release
// wrote), and whose Pod is gone before that release rewrote the
// condition, is stranded: the release creates the next Pod, and its own
// self-confinement policy refuses the spec.nextStop it then writes,
// because it judges the status the API server keeps on a spec update too.
// The next Pod is never stopped. Here the operator is scaled to zero while
// the condition is set and the Pod deleted, as a hand-over can leave it;
// the release still wins the race when its Ready write comes first. The
// steps docs/upgrading.md gives after the downgrade's rollout free a
// stranded ChaosPod and leave any other on schedule.
func strandedByAnUnknownReason(ctx context.Context, t *testing.T, c *node.Cluster, cs kubernetes.Interface, dyn dynamic.Interface,
	release, ref, tree, reason string, steps []string,
) {
	const ns, name = "shop-stranded", "stranded"
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	operators := watchOperatorPods(watchCtx, cs)
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	chaosPods := dyn.Resource(chaosv1.GroupVersionResource).Namespace(ns)
	_, err = chaosPods.Create(ctx, chaosPodObject(ns, name, "v1", "8s"), metav1.CreateOptions{})
	require.NoError(t, err)
	// run reports whether the ChaosPod's Pod runs with its run recorded,
	// and the Pod.
	run := func() (bool, *corev1.Pod, *unstructured.Unstructured) {
		o, err := chaosPods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil, nil
		}
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil, o
		}
		last, okLast := nestedTime(o, "status", "lastRun")
		next, okNext := nestedTime(o, "spec", "nextStop")
		return okLast && okNext && last.Equal(pod.CreationTimestamp.Time) && next.After(last), pod, o
	}
	require.True(t, eventually(ctx, time.Minute, 250*time.Millisecond, func() bool { ok, _, _ := run(); return ok }), "ChaosPod %s/%s never ran", ns, name)

	_, err = c.Kubectl(ctx, "-n", opNamespace, "scale", "deployment/"+opDeployment, "--replicas=0")
	require.NoError(t, err)
	require.True(t, eventually(ctx, 90*time.Second, 250*time.Millisecond, func() bool {
		pods, err := cs.CoreV1().Pods(opNamespace).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0
	}), "the operator's Pods outlived the scale to zero by 90s%s", podSummary(ctx, cs, opNamespace))
	o, err := chaosPods.Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	stuckAt, _ := nestedTime(o, "spec", "nextStop")
	require.NoError(t, unstructured.SetNestedSlice(o.Object, []any{map[string]any{
		"type": chaosv1.ConditionReady, "status": "False", "reason": reason, "observedGeneration": o.GetGeneration(),
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339), "message": "written by a later release",
	}}, "status", "conditions"))
	_, err = chaosPods.UpdateStatus(ctx, o, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
	require.True(t, eventually(ctx, time.Minute, 250*time.Millisecond, func() bool {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err != nil
	}), "the ChaosPod's Pod was not deleted")
	_, err = c.Kubectl(ctx, "-n", opNamespace, "scale", "deployment/"+opDeployment, "--replicas=2")
	require.NoError(t, err)
	waitAvailable(ctx, t, cs, 2, 3*time.Minute)

	// Stranded: the next Pod runs, its run is never recorded, its
	// nextStop is the passed one, and the operator's log says why. What
	// the API server holds decides; the log line, read from the kubelet's
	// files as they are written, is the reason shown beside it.
	require.True(t, eventually(ctx, 2*time.Minute, 250*time.Millisecond, func() bool {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil
	}), "%s created no Pod for %s/%s", release, ns, name)
	var refusal string
	_ = eventually(ctx, stopBound, 250*time.Millisecond, func() bool {
		for _, lines := range operators.logLines(ref, refused) {
			for _, l := range lines {
				if strings.Contains(l, readyRefusal) && strings.Contains(l, ns+"/"+name) {
					refusal = l
				}
			}
		}
		return refusal != ""
	})
	time.Sleep(stopBound)
	recorded, pod, o := run()
	require.NotNil(t, pod, "%s created no Pod for %s/%s", release, ns, name)
	next, _ := nestedTime(o, "spec", "nextStop")
	// Whether the release rewrites Ready before it writes nextStop is a
	// race between the Pod's add event and the reconcile that created
	// it: when Ready comes first, nothing is stranded. Either way the
	// downgrade's steps must leave the ChaosPod on schedule.
	stranded := !recorded && next.Equal(stuckAt)
	stuckFor := time.Since(stuckAt)
	switch {
	case stranded && refusal != "":
		t.Logf("stranded: %s", logError(refusal))
	case stranded:
		t.Logf("stranded, with no refusal line in the logs read yet")
	default:
		t.Logf("%s rewrote Ready before it wrote nextStop this time: not stranded (nextStop %s → %s)", release, stuckAt, next)
	}

	freed := time.Now()
	for _, step := range steps[1:] {
		runStep(ctx, t, c, step)
	}
	var last *corev1.Pod
	require.True(t, eventually(ctx, time.Minute, 250*time.Millisecond, func() bool {
		ok, p, o := run()
		last = p
		return ok && slices.Contains(readyReasons(t, tree), readyReason(o))
	}), "%s/%s not freed by the downgrade's steps", ns, name)
	recordedIn := time.Since(freed)
	require.True(t, eventually(ctx, time.Minute, 250*time.Millisecond, func() bool {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.UID != last.UID
	}), "%s/%s: the freed Pod was not stopped at its nextStop", ns, name)
	if stranded {
		t.Logf("figure: %s with Ready %s on a ChaosPod whose Pod went meanwhile: its next Pod unstopped %s past nextStop, %s's nextStop write refused by its own policy; the downgrade's steps freed it, run recorded %s later, then stopped on schedule",
			release, reason, stuckFor.Round(100*time.Millisecond), release, recordedIn.Round(100*time.Millisecond))
	}

	require.NoError(t, chaosPods.Delete(ctx, name, metav1.DeleteOptions{}))
	require.True(t, eventually(ctx, time.Minute, 250*time.Millisecond, func() bool {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0
	}), "the stranded ChaosPod's Pod outlived it")
	require.NoError(t, cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}))
}
