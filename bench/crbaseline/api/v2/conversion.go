package v2

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	chaosv1 "github.com/hexagonal-operator/operator/bench/crbaseline/api/v1"
)

var _ conversion.Convertible = (*ChaosPod)(nil)

// ConvertTo converts this v2 ChaosPod to the v1 hub. v1 has no field for
// spec.stop.interval, so it travels in the stop-interval annotation and
// ConvertFrom moves it back: the round trip loses nothing.
func (c *ChaosPod) ConvertTo(hub conversion.Hub) error {
	src := c
	dst, ok := hub.(*chaosv1.ChaosPod)
	if !ok {
		return fmt.Errorf("convert chaospod to hub: unexpected hub type %T", hub)
	}
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	dst.Spec = chaosv1.ChaosPodSpec{
		Template: *src.Spec.PodTemplate.DeepCopy(),
		NextStop: src.Spec.Stop.At.DeepCopy(),
	}
	dst.Status = chaosv1.ChaosPodStatus{LastRun: src.Status.LastRun.DeepCopy()}
	if src.Spec.Stop.Interval != nil {
		if dst.Annotations == nil {
			dst.Annotations = map[string]string{}
		}
		dst.Annotations[chaosv1.StopIntervalAnnotation] = src.Spec.Stop.Interval.Duration.String()
	}
	return nil
}

// ConvertFrom converts the v1 hub to this v2 ChaosPod. A stop-interval
// annotation that parses becomes spec.stop.interval and leaves the
// annotations; one that does not parse stays an annotation.
func (c *ChaosPod) ConvertFrom(hub conversion.Hub) error {
	dst := c
	src, ok := hub.(*chaosv1.ChaosPod)
	if !ok {
		return fmt.Errorf("convert chaospod from hub: unexpected hub type %T", hub)
	}
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	dst.Spec = ChaosPodSpec{
		PodTemplate: *src.Spec.Template.DeepCopy(),
		Stop:        ChaosPodStop{At: src.Spec.NextStop.DeepCopy()},
	}
	dst.Status = ChaosPodStatus{LastRun: src.Status.LastRun.DeepCopy()}
	if raw, ok := dst.Annotations[chaosv1.StopIntervalAnnotation]; ok {
		if d, err := time.ParseDuration(raw); err == nil {
			dst.Spec.Stop.Interval = &metav1.Duration{Duration: d}
			delete(dst.Annotations, chaosv1.StopIntervalAnnotation)
			if len(dst.Annotations) == 0 {
				dst.Annotations = nil
			}
		}
	}
	return nil
}
