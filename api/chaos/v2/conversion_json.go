package v2

import (
	"encoding/json"
	"fmt"
	"time"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
)

// ToHubJSON converts a v2 ChaosPod, decoded from JSON into generic maps,
// to v1 in place. It moves the renamed fields and touches nothing else, so
// whatever the Go types would normalise (defaults like `resources: {}`,
// `creationTimestamp: null`, a duration written as `90s`) or not know (a
// field of a newer Pod API) survives byte for byte. It makes the same
// changes as [ToHub]; a property test holds the two together.
func ToHubJSON(obj map[string]any) error {
	if err := checkKind(obj, SchemeGroupVersion.String()); err != nil {
		return err
	}
	obj["apiVersion"] = chaosv1.SchemeGroupVersion.String()
	spec, err := child(obj, "spec")
	if err != nil || spec == nil {
		return err
	}
	move(spec, "podTemplate", spec, "template")
	stop, err := child(spec, "stop")
	if err != nil || stop == nil {
		return err
	}
	delete(spec, "stop")
	move(stop, "at", spec, "nextStop")
	interval, ok := stop["interval"]
	if !ok || interval == nil {
		return nil
	}
	s, ok := interval.(string)
	if !ok {
		return fmt.Errorf("spec.stop.interval is a %T, want a duration string", interval)
	}
	meta, err := child(obj, "metadata")
	if err != nil {
		return err
	}
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	annotations, err := child(meta, "annotations")
	if err != nil {
		return err
	}
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[chaosv1.StopIntervalAnnotation] = s
	return nil
}

// FromHubJSON converts a v1 ChaosPod, decoded from JSON into generic maps,
// to v2 in place; the inverse of [ToHubJSON], with the changes of
// [FromHub].
func FromHubJSON(obj map[string]any) error {
	if err := checkKind(obj, chaosv1.SchemeGroupVersion.String()); err != nil {
		return err
	}
	obj["apiVersion"] = SchemeGroupVersion.String()
	spec, err := child(obj, "spec")
	if err != nil {
		return err
	}
	stop := map[string]any{}
	if spec != nil {
		move(spec, "template", spec, "podTemplate")
		move(spec, "nextStop", stop, "at")
	}
	if meta, err := child(obj, "metadata"); err != nil {
		return err
	} else if meta != nil {
		annotations, err := child(meta, "annotations")
		if err != nil {
			return err
		}
		if raw, ok := annotations[chaosv1.StopIntervalAnnotation].(string); ok {
			if _, err := time.ParseDuration(raw); err == nil {
				stop["interval"] = raw
				delete(annotations, chaosv1.StopIntervalAnnotation)
				if len(annotations) == 0 {
					delete(meta, "annotations")
				}
			}
		}
	}
	if len(stop) > 0 {
		if spec == nil {
			spec = map[string]any{}
			obj["spec"] = spec
		}
		spec["stop"] = stop
	}
	return nil
}

func checkKind(obj map[string]any, apiVersion string) error {
	if obj["kind"] != chaosv1.Kind || obj["apiVersion"] != apiVersion {
		return fmt.Errorf("got apiVersion %v kind %v, want %s %s", obj["apiVersion"], obj["kind"], apiVersion, chaosv1.Kind)
	}
	return nil
}

// child returns obj[key] as a map: nil when absent or null, an error when
// it is something else.
func child(obj map[string]any, key string) (map[string]any, error) {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is a %T, want an object", key, v)
	}
	return m, nil
}

// move renames from[key] to to[newKey] when present.
func move(from map[string]any, key string, to map[string]any, newKey string) {
	if v, ok := from[key]; ok {
		delete(from, key)
		to[newKey] = v
	}
}

// ConvertJSON converts a ChaosPod encoded as JSON to desiredAPIVersion
// (v1 or v2), through v1 as the hub: what the CRD's conversion webhook
// does for each object. It rewrites the JSON rather than typed objects, so
// a field this build does not know, or spells differently, is stored as the
// client wrote it.
func ConvertJSON(raw []byte, desiredAPIVersion string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if obj["kind"] != chaosv1.Kind {
		return nil, fmt.Errorf("cannot convert kind %q", obj["kind"])
	}
	hub, spoke := chaosv1.SchemeGroupVersion.String(), SchemeGroupVersion.String()
	if desiredAPIVersion != hub && desiredAPIVersion != spoke {
		return nil, fmt.Errorf("cannot convert to %q", desiredAPIVersion)
	}
	from := obj["apiVersion"]
	var err error
	switch from {
	case desiredAPIVersion:
		return raw, nil
	case spoke: // desired is the hub
		err = ToHubJSON(obj)
	case hub: // desired is v2
		err = FromHubJSON(obj)
	default:
		return nil, fmt.Errorf("cannot convert from %q", from)
	}
	if err != nil {
		return nil, fmt.Errorf("convert %v: %w", from, err)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", desiredAPIVersion, err)
	}
	return out, nil
}
