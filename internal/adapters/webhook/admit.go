package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	jsoniter "github.com/json-iterator/go"
	"gomodules.xyz/jsonpatch/v2"
	applypatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hexagonal-operator/operator/internal/ports"
)

// Admitter answers one admission request whose envelope the server has
// checked (a v1 AdmissionReview with a request and a UID); the server sets
// the response's UID.
type Admitter interface {
	Admit(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse
}

// Resource is what a hook serves: the kind of object in the request and the
// resource it was sent for.
type Resource struct {
	Kind     schema.GroupVersionKind
	Resource schema.GroupVersionResource
}

// check refuses a request for anything else: its object is no T.
func (r Resource) check(req *admissionv1.AdmissionRequest) error {
	kind := schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	res := schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource}
	if kind != r.Kind || res != r.Resource || req.SubResource != "" {
		got := res.String()
		if req.SubResource != "" {
			got += "/" + req.SubResource
		}
		return fmt.Errorf("this webhook serves %s (%s), not %s (%s)", r.Resource, r.Kind, got, kind)
	}
	return nil
}

// Mutating makes h a mutating hook answered by d, and [Validating] a
// validating one answered by v: requests for another resource are bad
// requests, operations h.Operations leave out are admitted without asking
// the rule, and the rule's context carries the request's facts
// (ports.AdmissionRequestFromContext). Set h's other fields first.
func Mutating[T any](h Hook, d ports.Defaulter[*T]) Hook {
	h.Type, h.Admitter = MutatingHook, &admitter[T]{res: h.Resource, ops: h.Operations, metadataOnly: h.MetadataOnly, defaulter: d}
	return h
}

// Validating is the row h serving the validator v, as [Mutating] is for a
// defaulter.
func Validating[T any](h Hook, v ports.Validator[*T]) Hook {
	h.Type, h.Admitter = ValidatingHook, &admitter[T]{res: h.Resource, ops: h.Operations, metadataOnly: h.MetadataOnly, validator: v}
	return h
}

// admitter adapts one rule, a defaulter or a validator, to an Admitter.
type admitter[T any] struct {
	res          Resource
	ops          []admissionregistrationv1.OperationType
	metadataOnly bool
	defaulter    ports.Defaulter[*T]
	validator    ports.Validator[*T]
}

// check refuses a metadata-only rule on a type without ObjectMeta, which
// would have nowhere to decode the metadata into.
func (a *admitter[T]) check() error {
	if _, ok := objectMeta(new(T)); a.metadataOnly && !ok {
		return fmt.Errorf("metadata only, but %T has no ObjectMeta", new(T))
	}
	return nil
}

// objectMeta is obj's own ObjectMeta, as every API type embeds it.
func objectMeta(obj any) (*metav1.ObjectMeta, bool) {
	acc, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil, false
	}
	m, ok := acc.GetObjectMeta().(*metav1.ObjectMeta)
	return m, ok && m != nil
}

func (a *admitter[T]) Admit(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if err := a.res.check(req); err != nil {
		return errored(http.StatusBadRequest, err)
	}
	op := admissionregistrationv1.OperationType(req.Operation)
	served := slices.Contains(a.ops, op) || slices.Contains(a.ops, admissionregistrationv1.OperationAll)
	// A defaulter has nothing to change on a deletion; CONNECT has no
	// method.
	if !served || op == admissionregistrationv1.Connect || (a.defaulter != nil && op == admissionregistrationv1.Delete) {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	obj, old, err := decodeObjects[T](req, a.defaulter == nil, a.metadataOnly)
	if err != nil {
		return errored(http.StatusBadRequest, err)
	}
	ctx = ports.NewContextWithAdmissionRequest(ctx, ports.AdmissionRequest{
		Operation: ports.Operation(req.Operation),
		Namespace: req.Namespace,
		Name:      req.Name,
		Username:  req.UserInfo.Username,
		DryRun:    req.DryRun != nil && *req.DryRun,
	})
	if a.defaulter != nil {
		return a.mutate(ctx, req, obj)
	}
	var warnings ports.Warnings
	switch op {
	case admissionregistrationv1.Create:
		warnings, err = a.validator.ValidateCreate(ctx, obj)
	case admissionregistrationv1.Update:
		warnings, err = a.validator.ValidateUpdate(ctx, old, obj)
	default:
		warnings, err = a.validator.ValidateDelete(ctx, old)
	}
	return verdict(warnings, err)
}

// mutate hands obj to the defaulter and answers with a minimal JSON patch
// from the object as received to the object as the rule left it.
func (a *admitter[T]) mutate(ctx context.Context, req *admissionv1.AdmissionRequest, obj *T) *admissionv1.AdmissionResponse {
	var (
		before *T
		err    error
	)
	if c, ok := any(obj).(interface{ DeepCopy() *T }); ok {
		before = c.DeepCopy()
	} else if before, err = decodeObject[T](req.Object.Raw, "object", a.metadataOnly); err != nil {
		return errored(http.StatusBadRequest, err)
	}
	warnings, err := a.defaulter.Default(ctx, obj)
	resp := verdict(warnings, err)
	if !resp.Allowed {
		return resp
	}
	if a.metadataOnly {
		ops, ok := metadataOnlyPatch(before, obj, req.Object.Raw)
		if !ok {
			return errored(http.StatusInternalServerError, fmt.Errorf("the %s rule reads metadata only but changed more than labels and annotations", a.res.Kind.Kind))
		}
		return withPatch(resp, ops)
	}
	// Most rules change labels or annotations only: such a change becomes
	// its patch directly, anything else is diffed below.
	if ops, ok := metadataPatch(before, obj); ok {
		return withPatch(resp, ops)
	}
	// Diff two encodings of the same Go type, not the raw request: fields
	// this build does not know and spellings the type normalises would
	// show up as spurious operations.
	original, err := json.Marshal(before)
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("encode %s: %w", a.res.Kind.Kind, err))
	}
	mutated, err := json.Marshal(obj)
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("encode mutated %s: %w", a.res.Kind.Kind, err))
	}
	ops, err := jsonpatch.CreatePatch(original, mutated)
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("compute patch: %w", err))
	}
	if len(ops) == 0 {
		return resp
	}
	if !applies(ops, req.Object.Raw) {
		// The Go type encodes something the raw object lacks under a path
		// the patch needs: diff the raw object itself.
		if ops, err = jsonpatch.CreatePatch(req.Object.Raw, mutated); err != nil {
			return errored(http.StatusInternalServerError, fmt.Errorf("compute patch: %w", err))
		}
	}
	return withPatch(resp, ops)
}

func withPatch(resp *admissionv1.AdmissionResponse, ops []jsonpatch.Operation) *admissionv1.AdmissionResponse {
	if len(ops) == 0 {
		return resp
	}
	patch, err := encodePatch(ops)
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("encode patch: %w", err))
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = patch, &pt
	return resp
}

// encodePatch spells ops as jsonpatch.Operation's own encoding does ("value"
// kept for every add and replace, null included) in one pass: that encoding
// marshals each operation on its own, through encoding/json.
func encodePatch(ops []jsonpatch.Operation) ([]byte, error) {
	st := encodeConfig.BorrowStream(nil)
	defer encodeConfig.ReturnStream(st)
	st.WriteArrayStart()
	for i, op := range ops {
		if i > 0 {
			st.WriteMore()
		}
		st.WriteObjectStart()
		st.WriteObjectField("op")
		st.WriteString(op.Operation)
		st.WriteMore()
		st.WriteObjectField("path")
		st.WriteString(op.Path)
		if op.Value != nil || op.Operation == "add" || op.Operation == "replace" {
			st.WriteMore()
			st.WriteObjectField("value")
			st.WriteVal(op.Value)
		}
		st.WriteObjectEnd()
	}
	st.WriteArrayEnd()
	if st.Error != nil {
		return nil, st.Error
	}
	return slices.Clone(st.Buffer()), nil
}

// decodeObjects decodes the request's object (required on CREATE and
// UPDATE) and old object (required on UPDATE and DELETE when withOld),
// their metadata alone when metadataOnly.
func decodeObjects[T any](req *admissionv1.AdmissionRequest, withOld, metadataOnly bool) (obj, old *T, err error) {
	op := req.Operation
	if op != admissionv1.Delete && len(req.Object.Raw) == 0 {
		return obj, old, fmt.Errorf("%s request without request.object", op)
	}
	if withOld && op != admissionv1.Create && len(req.OldObject.Raw) == 0 {
		return obj, old, fmt.Errorf("%s request without request.oldObject", op)
	}
	if obj, err = decodeObject[T](req.Object.Raw, "object", metadataOnly); err != nil {
		return obj, old, err
	}
	old, err = decodeObject[T](req.OldObject.Raw, "oldObject", metadataOnly)
	return obj, old, err
}

// decodeConfig decodes as encoding/json does, except that field names
// match exactly, as the API server matches them (and never escapes them);
// about twice as fast (BenchmarkDecodeReview, docs/performance.md).
var decodeConfig = jsoniter.Config{
	CaseSensitive:                 true,
	ObjectFieldMustBeSimpleString: true,
}.Froze()

// encodeConfig encodes as encoding/json does, without its reflection on
// every call.
var encodeConfig = jsoniter.ConfigCompatibleWithStandardLibrary

// unmarshal decodes with decodeConfig, cutting the excerpt of the input
// that json-iterator's errors end with: logs should not quote bodies.
func unmarshal(data []byte, v any) error {
	err := decodeConfig.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	msg := err.Error()
	if i := strings.Index(msg, ", error found in #"); i >= 0 {
		msg = msg[:i]
	}
	return errors.New(msg)
}

// decodeObject decodes raw into a new T; nil when raw is empty. With
// metadataOnly it decodes the object's metadata into T's ObjectMeta and
// skips the rest unread (check makes sure T has one).
func decodeObject[T any](raw []byte, field string, metadataOnly bool) (*T, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	obj := new(T)
	meta, ok := objectMeta(obj)
	if !metadataOnly || !ok {
		if err := unmarshal(raw, obj); err != nil {
			return nil, fmt.Errorf("decode request.%s: %w", field, err)
		}
		return obj, nil
	}
	var partial metav1.PartialObjectMetadata
	if err := unmarshal(raw, &partial); err != nil {
		return nil, fmt.Errorf("decode request.%s: %w", field, err)
	}
	*meta = partial.ObjectMeta
	return obj, nil
}

// applies reports whether ops apply to raw as the API server applies a
// webhook's patch (with evanphx/json-patch).
func applies(ops []jsonpatch.Operation, raw []byte) bool {
	encoded, err := json.Marshal(ops)
	if err != nil {
		return false
	}
	patch, err := applypatch.DecodePatch(encoded)
	if err != nil {
		return false
	}
	_, err = patch.Apply(raw)
	return err == nil
}

// verdict is the answer to a rule's result: allowed; denied with code 403
// when err is a ports.Denied; else errored.
func verdict(warnings ports.Warnings, err error) *admissionv1.AdmissionResponse {
	var denial *ports.DeniedError
	switch {
	case err == nil:
		return &admissionv1.AdmissionResponse{Allowed: true, Warnings: warnings}
	case errors.As(err, &denial):
		return &admissionv1.AdmissionResponse{
			Allowed:  false,
			Warnings: warnings,
			Result: &metav1.Status{
				Status:  metav1.StatusFailure,
				Code:    http.StatusForbidden,
				Reason:  metav1.StatusReasonForbidden,
				Message: denial.Message,
			},
		}
	}
	return errored(http.StatusInternalServerError, err)
}

// errored denies a request that could not be decided, in a well-formed
// review so that the API server shows the message.
func errored(code int32, err error) *admissionv1.AdmissionResponse {
	reason := metav1.StatusReasonInternalError
	if code == http.StatusBadRequest {
		reason = metav1.StatusReasonBadRequest
	}
	return &admissionv1.AdmissionResponse{
		Allowed: false,
		Result:  &metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: err.Error()},
	}
}
