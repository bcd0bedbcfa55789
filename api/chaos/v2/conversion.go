package v2

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
)

// ToHub converts a v2 ChaosPod to the v1 hub. src is not modified.
//
// v1 has no field for spec.stop.interval, so it travels in the
// [chaosv1.StopIntervalAnnotation] annotation; [FromHub] moves it back.
func ToHub(src *ChaosPod) *chaosv1.ChaosPod {
	dst := &chaosv1.ChaosPod{
		TypeMeta: metav1.TypeMeta{
			APIVersion: chaosv1.SchemeGroupVersion.String(),
			Kind:       chaosv1.Kind,
		},
		ObjectMeta: *src.ObjectMeta.DeepCopy(),
		Spec: chaosv1.ChaosPodSpec{
			Template: *src.Spec.PodTemplate.DeepCopy(),
			NextStop: src.Spec.Stop.At.DeepCopy(),
		},
		Status: chaosv1.ChaosPodStatus{
			LastRun:    src.Status.LastRun.DeepCopy(),
			Conditions: copyConditions(src.Status.Conditions),
		},
	}
	if src.Spec.Stop.Interval != nil {
		if dst.Annotations == nil {
			dst.Annotations = map[string]string{}
		}
		dst.Annotations[chaosv1.StopIntervalAnnotation] = src.Spec.Stop.Interval.Duration.String()
	}
	return dst
}

// FromHub converts a v1 hub ChaosPod to v2. src is not modified.
//
// A parsable [chaosv1.StopIntervalAnnotation] becomes spec.stop.interval and
// leaves the annotations; one that does not parse stays an annotation, so
// nothing is lost either way.
func FromHub(src *chaosv1.ChaosPod) *ChaosPod {
	dst := &ChaosPod{
		TypeMeta: metav1.TypeMeta{
			APIVersion: SchemeGroupVersion.String(),
			Kind:       chaosv1.Kind,
		},
		ObjectMeta: *src.ObjectMeta.DeepCopy(),
		Spec: ChaosPodSpec{
			PodTemplate: *src.Spec.Template.DeepCopy(),
			Stop:        ChaosPodStop{At: src.Spec.NextStop.DeepCopy()},
		},
		Status: ChaosPodStatus{
			LastRun:    src.Status.LastRun.DeepCopy(),
			Conditions: copyConditions(src.Status.Conditions),
		},
	}
	if raw, ok := dst.Annotations[chaosv1.StopIntervalAnnotation]; ok {
		if d, err := time.ParseDuration(raw); err == nil {
			dst.Spec.Stop.Interval = &metav1.Duration{Duration: d}
			delete(dst.Annotations, chaosv1.StopIntervalAnnotation)
			if len(dst.Annotations) == 0 {
				dst.Annotations = nil
			}
		}
	}
	return dst
}

// copyConditions copies status.conditions, which both versions spell alike.
func copyConditions(in []metav1.Condition) []metav1.Condition {
	if in == nil {
		return nil
	}
	out := make([]metav1.Condition, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
