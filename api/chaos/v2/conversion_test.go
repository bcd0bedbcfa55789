package v2_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/randfill"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
)

// equal treats nil and empty maps and slices alike: JSON cannot tell them
// apart either (omitempty).
var equal = equality.Semantic.DeepEqual

func filler(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 2).MaxDepth(6).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1000), resource.DecimalSI)
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.Unix(c.Int63n(1<<32), 0)
		},
	)
}

func TestRoundTripV2ThroughHubIsLossless(t *testing.T) {
	t.Parallel()
	for seed := range int64(300) {
		f := filler(seed)
		var in chaosv2.ChaosPod
		f.Fill(&in)
		in.TypeMeta = metav1.TypeMeta{APIVersion: chaosv2.SchemeGroupVersion.String(), Kind: chaosv1.Kind}
		// The annotation is reserved for the interval.
		delete(in.Annotations, chaosv1.StopIntervalAnnotation)
		if seed%3 == 0 {
			in.Spec.Stop.Interval = &metav1.Duration{Duration: time.Duration(rand.Int64N(int64(24 * time.Hour)))}
		}
		orig := in.DeepCopy()

		hub := chaosv2.ToHub(&in)
		out := chaosv2.FromHub(hub)

		require.True(t, equal(orig, &in), "seed %d: ToHub modified its input", seed)
		require.True(t, equal(orig, out), "seed %d: v2→v1→v2 changed the object\nin:  %+v\nout: %+v", seed, orig, out)
	}
}

func TestRoundTripV1ThroughV2IsLossless(t *testing.T) {
	t.Parallel()
	for seed := range int64(300) {
		f := filler(seed)
		var in chaosv1.ChaosPod
		f.Fill(&in)
		in.TypeMeta = metav1.TypeMeta{APIVersion: chaosv1.SchemeGroupVersion.String(), Kind: chaosv1.Kind}
		switch seed % 3 {
		case 0: // a valid interval, as ToHub spells it
			if in.Annotations == nil {
				in.Annotations = map[string]string{}
			}
			in.Annotations[chaosv1.StopIntervalAnnotation] = (time.Duration(rand.Int64N(int64(24*time.Hour))) * time.Millisecond / time.Millisecond).String()
		case 1: // garbage stays an annotation
			if in.Annotations == nil {
				in.Annotations = map[string]string{}
			}
			in.Annotations[chaosv1.StopIntervalAnnotation] = "not a duration"
		}
		orig := in.DeepCopy()

		v2 := chaosv2.FromHub(&in)
		out := chaosv2.ToHub(v2)

		require.True(t, equal(orig, &in), "seed %d: FromHub modified its input", seed)
		require.True(t, equal(orig, out), "seed %d: v1→v2→v1 changed the object\nin:  %+v\nout: %+v", seed, orig, out)
	}
}

func TestConversionMapsFields(t *testing.T) {
	t.Parallel()
	at := metav1.Unix(1_700_000_000, 0)
	v2 := &chaosv2.ChaosPod{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Annotations: map[string]string{"keep": "me"}},
		Spec: chaosv2.ChaosPodSpec{
			Stop: chaosv2.ChaosPodStop{At: &at, Interval: &metav1.Duration{Duration: 90 * time.Second}},
		},
	}
	v2.Spec.PodTemplate.Labels = map[string]string{"app": "x"}
	ready := metav1.Condition{Type: chaosv1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: 4,
		Reason: chaosv1.ReasonPodCreateFailed, Message: "refused", LastTransitionTime: at}
	v2.Status.Conditions = []metav1.Condition{ready}

	hub := chaosv2.ToHub(v2)

	assert.Equal(t, "chaosapps.metamagical.io/v1", hub.APIVersion)
	assert.Equal(t, &at, hub.Spec.NextStop)
	assert.Equal(t, map[string]string{"app": "x"}, hub.Spec.Template.Labels)
	assert.Equal(t, map[string]string{"keep": "me", chaosv1.StopIntervalAnnotation: "1m30s"}, hub.Annotations)
	assert.Equal(t, []metav1.Condition{ready}, hub.Status.Conditions)

	back := chaosv2.FromHub(hub)
	assert.Equal(t, map[string]string{"keep": "me"}, back.Annotations)
	assert.Equal(t, 90*time.Second, back.Spec.Stop.Interval.Duration)
	assert.Equal(t, []metav1.Condition{ready}, back.Status.Conditions)
	back.Status.Conditions[0].Message = "changed"
	assert.Equal(t, "refused", hub.Status.Conditions[0].Message, "the conversion copies, never shares")
}
