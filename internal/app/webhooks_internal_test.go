package app

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	"github.com/hexagonal-operator/operator/internal/adapters/memory"
	"github.com/hexagonal-operator/operator/internal/ports"
)

// The operator's Pod validator answers every refusal that depends on
// which ChaosPods exist with the same words, and writes why to the
// operator's log only, at debug level.
func TestOperatorPodRefusalsTellTheLogOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memory.NewStore[*chaosv1.ChaosPod](chaosv1.GroupKind)
	victim, err := store.Create(ctx, &chaosv1.ChaosPod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "victim"}})
	require.NoError(t, err)
	podOf := func(name string, uid types.UID) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: chaosv1.SchemeGroupVersion.String(), Kind: chaosv1.Kind, Name: name, UID: uid, Controller: ptr.To(true),
		}}}}
	}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		allowed bool
		logged  string // the reason the log gives; "" when nothing is logged
	}{
		{"its ChaosPod's Pod", podOf("victim", victim.UID), true, ""},
		{"a ChaosPod that does not exist", podOf("ghost", "any"), false, "chaospod apps/ghost does not exist"},
		{"another UID", podOf("victim", "other"), false, "chaospod apps/victim has UID " + string(victim.UID)},
		{"no controller", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "bare"}}, false, ""},
	}
	var answers []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			v, err := newOperatorPodValidator(operatorPodParams{ChaosPods: store, Logger: zap.New(core)})
			require.NoError(t, err)

			_, err = v.ValidateCreate(ctx, tt.pod)

			if tt.allowed {
				require.NoError(t, err)
				assert.Zero(t, logs.Len())
				return
			}
			var denied *ports.DeniedError
			require.ErrorAs(t, err, &denied)
			assert.NotContains(t, denied.Message, string(victim.UID), "the client is not told the UID")
			if tt.logged == "" {
				assert.Zero(t, logs.Len(), "a refusal that says nothing of the ChaosPods needs no other line")
				return
			}
			answers = append(answers, denied.Message)
			entries := logs.All()
			require.Len(t, entries, 1)
			assert.Equal(t, zapcore.DebugLevel, entries[0].Level)
			assert.Equal(t, "operator pod refused", entries[0].Message)
			assert.Contains(t, entries[0].ContextMap()["error"], tt.logged)
		})
	}
	require.Len(t, answers, 2)
	assert.Equal(t, answers[0], answers[1], "a missing ChaosPod and another UID read alike")

	// Without a logger it refuses all the same.
	v, err := newOperatorPodValidator(operatorPodParams{ChaosPods: store})
	require.NoError(t, err)
	_, err = v.ValidateCreate(ctx, podOf("ghost", "any"))
	var denied *ports.DeniedError
	assert.True(t, errors.As(err, &denied))
}
