package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	chaosv1 "github.com/hexagonal-operator/operator/api/chaos/v1"
	chaosv2 "github.com/hexagonal-operator/operator/api/chaos/v2"
)

// ConvertPath is where the CRD's conversion webhook calls.
const ConvertPath = "/convert"

// ChaosPodConversion is the ChaosPod CRD's conversion endpoint, through v1
// as the hub. It converts the JSON itself rather than typed objects, so a
// field this build does not know, or spells differently, is stored as the
// client wrote it.
func ChaosPodConversion() Conversion {
	return Conversion{Path: ConvertPath, Convert: convertChaosPod}
}

var (
	chaosV1 = chaosv1.SchemeGroupVersion.String()
	chaosV2 = chaosv2.SchemeGroupVersion.String()
)

func convertChaosPod(_ context.Context, raw []byte, desired string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if obj["kind"] != chaosv1.Kind {
		return nil, fmt.Errorf("cannot convert kind %q", obj["kind"])
	}
	if desired != chaosV1 && desired != chaosV2 {
		return nil, fmt.Errorf("cannot convert to %q", desired)
	}
	from := obj["apiVersion"]
	var err error
	switch {
	case from == desired:
		return raw, nil
	case from == chaosV2: // desired is v1
		err = chaosv2.ToHubJSON(obj)
	case from == chaosV1: // desired is v2
		err = chaosv2.FromHubJSON(obj)
	default:
		return nil, fmt.Errorf("cannot convert from %q", from)
	}
	if err != nil {
		return nil, fmt.Errorf("convert %v: %w", from, err)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", desired, err)
	}
	return out, nil
}
