package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hexagonal-operator/operator/examples/mirror/mirror"
	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatortest"
)

func TestMain(m *testing.M) { operatortest.Main(m) }

// refusal is the validator's message for 11 keys, written out by hand.
const refusal = "denied the request: a ConfigMap labelled example.test/mirror=true has at most 10 keys in data and binaryData, this one has 11"

// TestMirrorsAsDeployed runs the example as its config deploys it: as the
// ServiceAccount its generated roles are bound to, with nothing but those
// roles, and with its generated webhook configurations registered. The
// API server enforces OwnerReferencesPermissionEnforcement, as hardened
// clusters do, so creating a mirror that blocks its source's deletion
// needs the generated configmaps/finalizers rule too. There is no garbage
// collector here: the reconciler deletes what it must by itself.
func TestMirrorsAsDeployed(t *testing.T) {
	t.Parallel()
	cp := controlplane.StartT(t, controlplane.Options{
		AuditPolicy:    controlplane.DefaultAuditPolicy,
		APIServerFlags: []string{"--enable-admission-plugins=OwnerReferencesPermissionEnforcement"},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const ns = "mirrors"
	require.NoError(t, cp.EnsureNamespace(ctx, ns))

	d := operatortest.Deploy(t, cp, "config", mirrors, "--controllers=")
	cms := cp.Clientset().CoreV1().ConfigMaps(ns)
	waitForValidator(t, cms)

	source, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{mirror.Label: "true"}},
		Data:       map[string]string{"colour": "blue"},
		BinaryData: map[string][]byte{"logo": {0x89, 'P', 'N', 'G'}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	yes := true
	owner := []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: "settings", UID: source.UID,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}}
	eventuallyMirrored := func(t *testing.T, data map[string]string, binaryData map[string][]byte) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err := cms.Get(ctx, "settings-mirror", metav1.GetOptions{})
			require.NoError(c, err)
			assert.Equal(c, data, got.Data)
			assert.Equal(c, binaryData, got.BinaryData)
			assert.Equal(c, owner, got.OwnerReferences)
			assert.Empty(c, got.Labels, "a mirror is not mirrored")
		}, 30*time.Second, 50*time.Millisecond)
	}
	eventuallyGone := func(t *testing.T, name string) {
		t.Helper()
		require.Eventually(t, func() bool {
			_, err := cms.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}, 30*time.Second, 50*time.Millisecond, "%s deleted", name)
	}

	t.Run("a labelled ConfigMap gets a mirror it controls", func(t *testing.T) {
		eventuallyMirrored(t, map[string]string{"colour": "blue"}, map[string][]byte{"logo": {0x89, 'P', 'N', 'G'}})
	})

	t.Run("the mirror follows the source's data", func(t *testing.T) {
		cur, err := cms.Get(ctx, "settings", metav1.GetOptions{})
		require.NoError(t, err)
		cur.Data = map[string]string{"colour": "green", "size": "large"}
		_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
		require.NoError(t, err)
		eventuallyMirrored(t, map[string]string{"colour": "green", "size": "large"}, map[string][]byte{"logo": {0x89, 'P', 'N', 'G'}})
	})

	t.Run("a changed mirror is put back", func(t *testing.T) {
		cur, err := cms.Get(ctx, "settings-mirror", metav1.GetOptions{})
		require.NoError(t, err)
		cur.Data["colour"] = "red"
		_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
		require.NoError(t, err)
		eventuallyMirrored(t, map[string]string{"colour": "green", "size": "large"}, map[string][]byte{"logo": {0x89, 'P', 'N', 'G'}})
	})

	t.Run("removing the label deletes the mirror", func(t *testing.T) {
		cur, err := cms.Get(ctx, "settings", metav1.GetOptions{})
		require.NoError(t, err)
		delete(cur.Labels, mirror.Label)
		_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
		require.NoError(t, err)
		eventuallyGone(t, "settings-mirror")
	})

	t.Run("deleting a source deletes its mirror", func(t *testing.T) {
		_, err := cms.Create(ctx, labelledWith("brief", 1), metav1.CreateOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := cms.Get(ctx, "brief-mirror", metav1.GetOptions{})
			return err == nil
		}, 30*time.Second, 50*time.Millisecond, "brief mirrored")
		require.NoError(t, cms.Delete(ctx, "brief", metav1.DeleteOptions{}))
		eventuallyGone(t, "brief-mirror")
	})

	t.Run("a labelled ConfigMap with 11 keys is refused, with 10 admitted", func(t *testing.T) {
		_, err := cms.Create(ctx, labelledWith("crowded", 11), metav1.CreateOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), refusal)
		_, err = cms.Get(ctx, "crowded", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "nothing was stored")

		full, err := cms.Create(ctx, labelledWith("full", 10), metav1.CreateOptions{})
		require.NoError(t, err)
		full.Data["k10"] = "one too many"
		_, err = cms.Update(ctx, full, metav1.UpdateOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), refusal, "an update is held to the limit too")
	})

	t.Run("an unlabelled ConfigMap with 11 keys never reaches the rule", func(t *testing.T) {
		cm := labelledWith("anyone", 11)
		cm.Labels = nil
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
	})

	t.Run("the ServiceAccount did all of it and was refused nothing", func(t *testing.T) {
		// The log is written asynchronously: wait for the last write the
		// controller made.
		var requests []controlplane.AuditEvent
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var err error
			requests, err = d.Requests()
			require.NoError(c, err)
			assert.True(c, slices.ContainsFunc(requests, func(e controlplane.AuditEvent) bool {
				return e.Verb == "delete" && e.ObjectRef != nil && e.ObjectRef.Resource == "configmaps" && e.ObjectRef.Name == "brief-mirror"
			}))
		}, 10*time.Second, 100*time.Millisecond, "the audit log has the controller's requests")
		for _, verb := range []string{"watch", "create", "update", "delete"} {
			assert.True(t, slices.ContainsFunc(requests, func(e controlplane.AuditEvent) bool {
				return e.Verb == verb && e.ObjectRef != nil && e.ObjectRef.Resource == "configmaps"
			}), "the ServiceAccount made a %s of configmaps", verb)
		}
		for _, e := range requests {
			assert.False(t, e.ForbiddenByAuthorizer(), "forbidden: %s %s", e.Verb, e.RequestURI)
		}
	})

	assert.Positive(t, d.Counter(t, "controller_runtime_reconcile_total", map[string]string{"controller": "mirror", "result": "success"}))
}

// labelledWith is a ConfigMap asking for a mirror, with keys data keys.
func labelledWith(name string, keys int) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{mirror.Label: "true"}},
		Data:       map[string]string{},
	}
	for i := range keys {
		cm.Data["k"+strconv.Itoa(i)] = "v"
	}
	return cm
}

// waitForValidator waits until the API server calls the validator: it
// learns about new configurations a moment later.
func waitForValidator(t *testing.T, cms typedcorev1.ConfigMapInterface) {
	t.Helper()
	var last error
	require.Eventually(t, func() bool {
		_, last = cms.Create(context.Background(), labelledWith("probe", 11), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), refusal)
	}, 60*time.Second, 50*time.Millisecond, "the API server never called the validator (last error: %v)", last)
}
