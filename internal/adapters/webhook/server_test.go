package webhook_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hexagonal-operator/operator/internal/adapters/webhook"
	"github.com/hexagonal-operator/operator/internal/app"
	"github.com/hexagonal-operator/operator/internal/domain/admission"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestBadRequestsAreAnsweredWithHTTPErrors(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), func(o *webhook.Options) { o.MaxRequestBytes = 64 << 10 })
	good := podReview(t, "u1", admissionv1.Create, testPod(nil), nil)
	tests := []struct {
		name        string
		method      string
		contentType string
		body        []byte
		wantCode    int
		wantText    string
		notText     string // must not appear: the answer does not quote the body
	}{
		{name: "malformed JSON", body: []byte(`{"apiVersion":`), wantCode: 400, wantText: "decode AdmissionReview"},
		{name: "malformed deep inside", body: []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","object":{"metadata":{"annotations":{"token":"s3cr3t-value"}},"spec":[1,}}}}`), wantCode: 400, wantText: "decode AdmissionReview", notText: "s3cr3t-value"},
		{name: "wrong type", body: []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":42,"name":"s3cr3t-value"}}`), wantCode: 400, wantText: "decode AdmissionReview", notText: "s3cr3t-value"},
		{name: "not an object", body: []byte(`[1,2,3]`), wantCode: 400, wantText: "decode AdmissionReview"},
		{name: "empty body", body: nil, wantCode: 400, wantText: "empty request body"},
		{name: "wrong content type", contentType: "text/plain", body: good, wantCode: 415, wantText: "application/json"},
		{name: "no content type", contentType: "-", body: good, wantCode: 415, wantText: "application/json"},
		{name: "YAML content type", contentType: "application/yaml", body: good, wantCode: 415},
		{name: "GET", method: http.MethodGet, wantCode: 405},
		{name: "v1beta1 review", body: bytes.Replace(good, []byte("admission.k8s.io/v1"), []byte("admission.k8s.io/v1beta1"), 1), wantCode: 400, wantText: `"admission.k8s.io/v1beta1"`},
		{name: "wrong apiVersion", body: bytes.Replace(good, []byte("admission.k8s.io/v1"), []byte("apps/v1"), 1), wantCode: 400, wantText: "only admission.k8s.io/v1 AdmissionReview"},
		{name: "wrong kind", body: bytes.Replace(good, []byte(`"kind":"AdmissionReview"`), []byte(`"kind":"Status"`), 1), wantCode: 400, wantText: `kind "Status"`},
		{name: "no apiVersion or kind", body: []byte(`{"request":{"uid":"u1"}}`), wantCode: 400, wantText: "only admission.k8s.io/v1"},
		{name: "no request", body: []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), wantCode: 400, wantText: "without a request"},
		{name: "no uid", body: podReview(t, "", admissionv1.Create, testPod(nil), nil), wantCode: 400, wantText: "without a uid"},
		{name: "oversize with length", body: podReview(t, "u1", admissionv1.Create, hugePod(128<<10), nil), wantCode: 413, wantText: "exceeds the limit"},
	}
	for _, tt := range tests {
		for _, path := range []string{app.PodMutatePath, app.PodValidatePath} {
			t.Run(tt.name+" "+path, func(t *testing.T) {
				t.Parallel()
				method := tt.method
				if method == "" {
					method = http.MethodPost
				}
				req, err := http.NewRequest(method, f.base+path, bytes.NewReader(tt.body))
				require.NoError(t, err)
				switch tt.contentType {
				case "":
					req.Header.Set("Content-Type", "application/json")
				case "-":
				default:
					req.Header.Set("Content-Type", tt.contentType)
				}
				resp, err := f.client.Do(req)
				require.NoError(t, err)
				defer func() { _ = resp.Body.Close() }()
				var text bytes.Buffer
				_, _ = text.ReadFrom(resp.Body)
				assert.Equal(t, tt.wantCode, resp.StatusCode, text.String())
				assert.Contains(t, text.String(), tt.wantText)
				if tt.notText != "" {
					assert.NotContains(t, text.String(), tt.notText)
				}
			})
		}
	}
}

func TestOversizeBodyWithoutLengthIsRefused(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), func(o *webhook.Options) { o.MaxRequestBytes = 64 << 10 })
	body := podReview(t, "u1", admissionv1.Create, hugePod(128<<10), nil)
	// A reader of unknown size makes the client send the body chunked, so
	// only the limit on reading can catch it.
	req, err := http.NewRequest(http.MethodPost, f.base+app.PodMutatePath, struct{ *bytes.Reader }{bytes.NewReader(body)})
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	// The server survives and serves the next request normally.
	got := f.admit(t, app.PodMutatePath, podReview(t, "u2", admissionv1.Create, testPod(nil), nil))
	assert.True(t, got.Allowed)
}

func hugePod(size int) *corev1.Pod {
	return testPod(map[string]string{"padding": strings.Repeat("x", size)})
}

func TestRequestsTheHookDoesNotServeAreDeniedWithTheirUID(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	deployment := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}`)
	tests := []struct {
		name     string
		body     []byte
		wantCode int32
		wantText string
	}{
		{
			name: "another kind",
			body: podReview(t, "u-kind", admissionv1.Create, deployment, nil, func(r *admissionv1.AdmissionReview) {
				r.Request.Kind = metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
				r.Request.Resource = metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
			}),
			wantCode: 400, wantText: "this webhook serves /v1, Resource=pods",
		},
		{
			name: "a subresource",
			body: podReview(t, "u-sub", admissionv1.Update, testPod(nil), testPod(nil), func(r *admissionv1.AdmissionReview) {
				r.Request.SubResource = "status"
			}),
			wantCode: 400, wantText: "pods/status",
		},
		{
			name: "another version",
			body: podReview(t, "u-version", admissionv1.Create, testPod(nil), nil, func(r *admissionv1.AdmissionReview) {
				r.Request.Kind.Version = "v2"
				r.Request.Resource.Version = "v2"
			}),
			wantCode: 400, wantText: "not /v2",
		},
		{
			name:     "create without object",
			body:     podReview(t, "u-noobj", admissionv1.Create, nil, nil),
			wantCode: 400, wantText: "CREATE request without request.object",
		},
		{
			name:     "object that is not a pod",
			body:     podReview(t, "u-garbage", admissionv1.Create, []byte(`"just a string"`), nil),
			wantCode: 400, wantText: "decode request.object",
		},
		{
			name:     "old object that is not a pod",
			body:     podReview(t, "u-garbage-old", admissionv1.Update, testPod(nil), []byte(`{"metadata":7}`)),
			wantCode: 400, wantText: "decode request.oldObject",
		},
	}
	for _, tt := range tests {
		for _, path := range []string{app.PodMutatePath, app.PodValidatePath} {
			t.Run(tt.name+" "+path, func(t *testing.T) {
				t.Parallel()
				var sent admissionv1.AdmissionReview
				require.NoError(t, json.Unmarshal(tt.body, &sent))

				got := f.admit(t, path, tt.body)

				assert.Equal(t, sent.Request.UID, got.UID)
				assert.False(t, got.Allowed)
				require.NotNil(t, got.Result)
				assert.Equal(t, tt.wantCode, got.Result.Code)
				assert.Contains(t, got.Result.Message, tt.wantText)
				assert.Nil(t, got.Patch)
			})
		}
	}
}

func TestMutationIsAMinimalJSONPatch(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	withUnknown := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"apps","annotations":{"team":"a"}},` +
		`"spec":{"futureField":{"x":1},"containers":[{"name":"web","image":"nginx","resources":{"limits":{"cpu":"1000m"}}}]}}`)
	tests := []struct {
		name         string
		op           admissionv1.Operation
		object       any
		wantPatch    string // "" means no patch
		wantWarnings []string
	}{
		{
			name:      "no annotations",
			op:        admissionv1.Create,
			object:    testPod(nil),
			wantPatch: `[{"op":"add","path":"/metadata/annotations","value":{"example-mutating-admission-webhook":"foo"}}]`,
		},
		{
			name:      "other annotations are kept",
			op:        admissionv1.Create,
			object:    testPod(map[string]string{"team": "a", "kubernetes.io/description": "web"}),
			wantPatch: `[{"op":"add","path":"/metadata/annotations/example-mutating-admission-webhook","value":"foo"}]`,
		},
		{
			name:         "another value is replaced",
			op:           admissionv1.Update,
			object:       testPod(map[string]string{admission.PodAnnotationKey: "bar"}),
			wantPatch:    `[{"op":"replace","path":"/metadata/annotations/example-mutating-admission-webhook","value":"foo"}]`,
			wantWarnings: []string{`annotation example-mutating-admission-webhook was "bar", set to "foo"`},
		},
		{
			name:   "already annotated",
			op:     admissionv1.Update,
			object: testPod(map[string]string{admission.PodAnnotationKey: "foo"}),
		},
		{
			name:      "fields this build does not know and quantity spellings are untouched",
			op:        admissionv1.Create,
			object:    withUnknown,
			wantPatch: `[{"op":"add","path":"/metadata/annotations/example-mutating-admission-webhook","value":"foo"}]`,
		},
		{
			name: "delete",
			op:   admissionv1.Delete,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var old any
			if tt.op != admissionv1.Create {
				old = testPod(nil)
			}
			obj := tt.object
			if tt.op == admissionv1.Delete {
				obj = nil
			}
			body := podReview(t, "uid-"+tt.name, tt.op, obj, old)

			got := f.admit(t, app.PodMutatePath, body)

			assert.Equal(t, "uid-"+tt.name, string(got.UID))
			assert.True(t, got.Allowed)
			assert.Equal(t, tt.wantWarnings, got.Warnings)
			if tt.wantPatch == "" {
				assert.Nil(t, got.Patch)
				assert.Nil(t, got.PatchType)
				return
			}
			require.NotNil(t, got.PatchType)
			assert.Equal(t, admissionv1.PatchTypeJSONPatch, *got.PatchType)
			assert.JSONEq(t, tt.wantPatch, string(got.Patch))

			// The patch applies to exactly what was sent, and the result
			// is what the rule wanted.
			original := raw(t, tt.object).Raw
			p, err := jsonpatch.DecodePatch(got.Patch)
			require.NoError(t, err)
			patched, err := p.Apply(original)
			require.NoError(t, err)
			var before, after map[string]any
			require.NoError(t, json.Unmarshal(original, &before))
			require.NoError(t, json.Unmarshal(patched, &after))
			annotations := after["metadata"].(map[string]any)["annotations"].(map[string]any)
			assert.Equal(t, "foo", annotations[admission.PodAnnotationKey])
			delete(annotations, admission.PodAnnotationKey)
			if len(annotations) == 0 {
				delete(after["metadata"].(map[string]any), "annotations")
			}
			if b, ok := before["metadata"].(map[string]any)["annotations"].(map[string]any); ok {
				delete(b, admission.PodAnnotationKey)
				if len(b) == 0 {
					delete(before["metadata"].(map[string]any), "annotations")
				}
			}
			assert.Equal(t, before, after, "nothing but the annotation changes")
		})
	}
}

func TestValidationVerdicts(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	tests := []struct {
		name        string
		op          admissionv1.Operation
		pod         *corev1.Pod
		wantAllowed bool
		wantMessage string
	}{
		{name: "annotated", op: admissionv1.Create, pod: testPod(map[string]string{admission.PodAnnotationKey: "foo"}), wantAllowed: true},
		{name: "missing", op: admissionv1.Create, pod: testPod(nil), wantMessage: "missing annotation example-mutating-admission-webhook"},
		{name: "wrong value", op: admissionv1.Update, pod: testPod(map[string]string{admission.PodAnnotationKey: "bar"}), wantMessage: `did not have value "foo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := f.admit(t, app.PodValidatePath, podReview(t, "v-"+tt.name, tt.op, tt.pod, testPod(nil)))
			assert.Equal(t, "v-"+tt.name, string(got.UID))
			assert.Equal(t, tt.wantAllowed, got.Allowed)
			assert.Nil(t, got.Patch)
			if tt.wantAllowed {
				return
			}
			require.NotNil(t, got.Result)
			assert.Equal(t, int32(http.StatusForbidden), got.Result.Code)
			assert.Equal(t, metav1.StatusReasonForbidden, got.Result.Reason)
			assert.Contains(t, got.Result.Message, tt.wantMessage)
		})
	}
}

func TestRulesWarningsErrorsAndPanics(t *testing.T) {
	t.Parallel()
	hooks := []webhook.Hook{
		webhook.Validating(testHook("/panic"), validateFunc(func(context.Context, *corev1.Pod) (ports.Warnings, error) {
			panic("rule exploded")
		})),
		webhook.Validating(testHook("/error"), validateFunc(func(context.Context, *corev1.Pod) (ports.Warnings, error) {
			return ports.Warnings{"unseen"}, assert.AnError
		})),
		webhook.Mutating(testHook("/warn-deny"), defaultFunc(func(context.Context, *corev1.Pod) (ports.Warnings, error) {
			return ports.Warnings{"careful", "very careful"}, fmt.Errorf("wrapped: %w", ports.Denied("no"))
		})),
		webhook.Mutating(testHook("/in-place"), defaultFunc(func(_ context.Context, pod *corev1.Pod) (ports.Warnings, error) {
			pod.Labels["added"] = "yes"
			return ports.Warnings{"w"}, nil
		})),
		webhook.Validating(testHook("/request"), echo{}),
		webhook.Validating(withHook(testHook("/delete"), func(h *webhook.Hook) {
			h.Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
		}), echo{}),
	}
	f := startFixture(t, hooks, nil)

	t.Run("panic is a 500 and the server lives on", func(t *testing.T) {
		resp, body := f.post(t, "/panic", "application/json", podReview(t, "p1", admissionv1.Create, testPod(nil), nil))
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		assert.Contains(t, string(body), "internal error")
		entries := f.logs.FilterMessage("admission request").FilterField(zap.String("webhook", "/panic")).All()
		require.Len(t, entries, 1)
		ctx := entries[0].ContextMap()
		assert.Equal(t, "rule exploded", ctx["panic"])
		assert.Equal(t, "p1", ctx["uid"])
		assert.Contains(t, ctx["stack"], "server_test.go")
		resp, _ = f.post(t, "/panic", "application/json", podReview(t, "p2", admissionv1.Create, testPod(nil), nil))
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		got := f.admit(t, "/request", podReview(t, "p3", admissionv1.Create, testPod(nil), nil))
		assert.True(t, got.Allowed)
	})
	t.Run("an error that is not a denial is a denial with code 500", func(t *testing.T) {
		got := f.admit(t, "/error", podReview(t, "e1", admissionv1.Create, testPod(nil), nil))
		assert.Equal(t, "e1", string(got.UID))
		assert.False(t, got.Allowed)
		assert.Equal(t, int32(500), got.Result.Code)
		assert.Equal(t, metav1.StatusReasonInternalError, got.Result.Reason)
		assert.Contains(t, got.Result.Message, assert.AnError.Error())
		assert.Empty(t, got.Warnings)
	})
	t.Run("a wrapped denial is a denial with code 403, and warnings pass through", func(t *testing.T) {
		got := f.admit(t, "/warn-deny", podReview(t, "w1", admissionv1.Create, testPod(nil), nil))
		assert.False(t, got.Allowed)
		assert.Equal(t, []string{"careful", "very careful"}, got.Warnings)
		assert.Equal(t, int32(http.StatusForbidden), got.Result.Code)
		assert.Equal(t, "no", got.Result.Message)
		assert.Nil(t, got.Patch)
	})
	t.Run("the defaulter's change is the patch", func(t *testing.T) {
		got := f.admit(t, "/in-place", podReview(t, "i1", admissionv1.Create, testPod(nil), nil))
		assert.True(t, got.Allowed)
		assert.Equal(t, []string{"w"}, got.Warnings)
		assert.JSONEq(t, `[{"op":"add","path":"/metadata/labels/added","value":"yes"}]`, string(got.Patch))
	})
	t.Run("the rule sees the decoded objects and the request's facts", func(t *testing.T) {
		old := testPod(nil)
		old.Name = "old-web"
		got := f.admit(t, "/request", podReview(t, "r1", admissionv1.Update, testPod(nil), old, func(r *admissionv1.AdmissionReview) {
			r.Request.DryRun = new(true)
		}))
		assert.Equal(t, []string{"update", "old-web", "web", "UPDATE", "apps/web", "alice", "dry"}, got.Warnings)
		got = f.admit(t, "/request", podReview(t, "r2", admissionv1.Create, testPod(nil), nil))
		assert.Equal(t, []string{"create", "web", "CREATE", "apps/web", "alice", "wet"}, got.Warnings)
	})
	t.Run("an operation the hook is not registered for is admitted without the rule", func(t *testing.T) {
		for _, op := range []admissionv1.Operation{admissionv1.Delete, admissionv1.Connect} {
			got := f.admit(t, "/request", podReview(t, "o1", op, nil, testPod(nil)))
			assert.True(t, got.Allowed, op)
			assert.Empty(t, got.Warnings, op)
		}
		got := f.admit(t, "/delete", podReview(t, "o2", admissionv1.Update, testPod(nil), testPod(nil)))
		assert.True(t, got.Allowed)
		assert.Empty(t, got.Warnings)
	})
	t.Run("a deletion is validated on its old object", func(t *testing.T) {
		got := f.admit(t, "/delete", podReview(t, "d1", admissionv1.Delete, nil, testPod(nil)))
		assert.True(t, got.Allowed)
		assert.Equal(t, []string{"delete", "web", "DELETE", "apps/web", "alice", "wet"}, got.Warnings)
	})
	t.Run("an object the method takes is required", func(t *testing.T) {
		for _, tt := range []struct {
			path     string
			op       admissionv1.Operation
			obj, old any
			want     string
		}{
			{"/request", admissionv1.Update, testPod(nil), nil, "UPDATE request without request.oldObject"},
			{"/request", admissionv1.Update, nil, testPod(nil), "UPDATE request without request.object"},
			{"/delete", admissionv1.Delete, nil, nil, "DELETE request without request.oldObject"},
			{"/in-place", admissionv1.Update, nil, testPod(nil), "UPDATE request without request.object"},
		} {
			got := f.admit(t, tt.path, podReview(t, "n1", tt.op, tt.obj, tt.old))
			assert.False(t, got.Allowed, tt.want)
			assert.Equal(t, int32(http.StatusBadRequest), got.Result.Code, tt.want)
			assert.Equal(t, tt.want, got.Result.Message)
		}
		got := f.admit(t, "/in-place", podReview(t, "n2", admissionv1.Update, testPod(nil), nil))
		assert.True(t, got.Allowed, "a defaulter takes no old object")
	})
}

// echo is a validator whose warnings say what it was asked: the method,
// the objects' names and the request's facts from the context.
type echo struct{}

func (echo) ValidateCreate(ctx context.Context, pod *corev1.Pod) (ports.Warnings, error) {
	return append(ports.Warnings{"create", pod.Name}, facts(ctx)...), nil
}

func (echo) ValidateUpdate(ctx context.Context, old, pod *corev1.Pod) (ports.Warnings, error) {
	return append(ports.Warnings{"update", old.Name, pod.Name}, facts(ctx)...), nil
}

func (echo) ValidateDelete(ctx context.Context, pod *corev1.Pod) (ports.Warnings, error) {
	return append(ports.Warnings{"delete", pod.Name}, facts(ctx)...), nil
}

func facts(ctx context.Context) ports.Warnings {
	req, ok := ports.AdmissionRequestFromContext(ctx)
	if !ok {
		return ports.Warnings{"no request in the context"}
	}
	return ports.Warnings{string(req.Operation), req.Namespace + "/" + req.Name, req.Username, map[bool]string{true: "dry", false: "wet"}[req.DryRun]}
}

// A metadata-only rule sees the object's metadata and nothing else, and
// answers as a rule given the whole object would; one that changes more
// than labels and annotations gets an error, not a patch of fields it
// never saw.
func TestMetadataOnlyRulesSeeMetadataAlone(t *testing.T) {
	t.Parallel()
	metadataOnly := func(path string) webhook.Hook {
		return withHook(testHook(path), func(h *webhook.Hook) { h.MetadataOnly = true })
	}
	var seen []corev1.PodSpec
	var mu sync.Mutex
	hooks := []webhook.Hook{
		webhook.Mutating(metadataOnly("/annotate"), defaultFunc(func(_ context.Context, pod *corev1.Pod) (ports.Warnings, error) {
			mu.Lock()
			seen = append(seen, pod.Spec)
			mu.Unlock()
			pod.Annotations = map[string]string{"a": "b"}
			return nil, nil
		})),
		webhook.Mutating(testHook("/annotate-whole"), defaultFunc(func(_ context.Context, pod *corev1.Pod) (ports.Warnings, error) {
			pod.Annotations = map[string]string{"a": "b"}
			return nil, nil
		})),
		webhook.Mutating(metadataOnly("/spec"), defaultFunc(func(_ context.Context, pod *corev1.Pod) (ports.Warnings, error) {
			pod.Spec.NodeName = "n"
			return nil, nil
		})),
		webhook.Validating(metadataOnly("/owned"), validateFunc(func(_ context.Context, pod *corev1.Pod) (ports.Warnings, error) {
			if len(pod.OwnerReferences) == 0 || pod.Spec.Containers != nil {
				return nil, ports.Denied("no owner, or more than metadata")
			}
			return nil, nil
		})),
	}
	f := startFixture(t, hooks, nil)
	pod := testPod(map[string]string{"x": "y"})
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u1"}}
	review := podReview(t, "m1", admissionv1.Create, pod, nil)

	got := f.admit(t, "/annotate", review)
	require.True(t, got.Allowed)
	whole := f.admit(t, "/annotate-whole", review)
	assert.JSONEq(t, string(whole.Patch), string(got.Patch), "the patch of a rule given the whole object")
	require.Len(t, seen, 1)
	assert.Equal(t, corev1.PodSpec{}, seen[0], "the rule saw the spec")

	assert.True(t, f.admit(t, "/owned", review).Allowed)

	bad := f.admit(t, "/spec", review)
	assert.False(t, bad.Allowed)
	assert.Equal(t, int32(http.StatusInternalServerError), bad.Result.Code)
	assert.Contains(t, bad.Result.Message, "metadata only")
	assert.Empty(t, bad.Patch)
}

func TestUnknownPathIsNotFound(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	resp, _ := f.post(t, "/mutate-something-else", "application/json", podReview(t, "x", admissionv1.Create, testPod(nil), nil))
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestMetricsAndLogLines(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	f.admit(t, app.PodMutatePath, podReview(t, "m1", admissionv1.Create, testPod(nil), nil))
	f.admit(t, app.PodMutatePath, podReview(t, "m2", admissionv1.Create, testPod(nil), nil))
	f.admit(t, app.PodValidatePath, podReview(t, "v1", admissionv1.Create, testPod(nil), nil))
	f.post(t, app.PodValidatePath, "text/plain", []byte("x"))

	assert.Equal(t, map[string]float64{
		`controller_runtime_webhook_requests_total{code="200",webhook="/mutate--v1-pod"}`:   2,
		`controller_runtime_webhook_requests_total{code="500",webhook="/mutate--v1-pod"}`:   0,
		`controller_runtime_webhook_requests_total{code="200",webhook="/validate--v1-pod"}`: 1,
		`controller_runtime_webhook_requests_total{code="415",webhook="/validate--v1-pod"}`: 1,
		`controller_runtime_webhook_requests_total{code="500",webhook="/validate--v1-pod"}`: 0,
		`controller_runtime_webhook_requests_in_flight{webhook="/mutate--v1-pod"}`:          0,
		`controller_runtime_webhook_requests_in_flight{webhook="/validate--v1-pod"}`:        0,
		`controller_runtime_webhook_latency_seconds_count{webhook="/mutate--v1-pod"}`:       2,
		`controller_runtime_webhook_latency_seconds_count{webhook="/validate--v1-pod"}`:     2,
		`controller_runtime_webhook_panics_total{}`:                                         0,
	}, gather(t, f.reg))

	lines := f.logs.FilterMessage("admission request").All()
	require.Len(t, lines, 4, "one line per request")
	byUID := map[string]map[string]any{}
	for _, l := range lines {
		ctx := l.ContextMap()
		if uid, ok := ctx["uid"].(string); ok {
			byUID[uid] = ctx
			assert.Contains(t, ctx, "latency")
		}
	}
	m1 := byUID["m1"]
	require.NotNil(t, m1)
	for key, want := range map[string]any{"kind": "Pod", "namespace": "apps", "name": "web", "operation": "CREATE", "user": "alice", "allowed": true, "webhook": app.PodMutatePath} {
		assert.Equal(t, want, m1[key], key)
	}
	assert.Equal(t, false, byUID["v1"]["allowed"])
	assert.Equal(t, "missing annotation example-mutating-admission-webhook", byUID["v1"]["message"])
	// Requests were sent one after the other: allowed, allowed, denied,
	// bad content type.
	assert.Equal(t, []string{"debug", "debug", "info", "info"}, []string{
		lines[0].Level.String(), lines[1].Level.String(), lines[2].Level.String(), lines[3].Level.String(),
	}, "allowed requests at debug, denials and bad requests at info")
	assert.Equal(t, int64(415), lines[3].ContextMap()["code"])
}

func TestPatchAppliesEvenWhenTheRawObjectLacksAParent(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	// No metadata at all: the Go type encodes an empty one, so the minimal
	// patch's parent is missing in what was sent.
	sent := []byte(`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"web","image":"nginx"}]}}`)
	got := f.admit(t, app.PodMutatePath, podReview(t, "no-meta", admissionv1.Create, sent, nil))
	require.True(t, got.Allowed)
	p, err := jsonpatch.DecodePatch(got.Patch)
	require.NoError(t, err)
	patched, err := p.Apply(sent)
	require.NoError(t, err, "patch %s", got.Patch)
	var pod corev1.Pod
	require.NoError(t, json.Unmarshal(patched, &pod))
	assert.Equal(t, map[string]string{admission.PodAnnotationKey: "foo"}, pod.Annotations)
	assert.Equal(t, "nginx", pod.Spec.Containers[0].Image)
}

// A stopping server goes on serving for its shutdown delay, telling each
// caller to close its connection, so that admission calls already on their
// way succeed; then it closes its port.
func TestStopServesThroughTheShutdownDelay(t *testing.T) {
	t.Parallel()
	// Each call during the delay opens a new TLS connection; the margin
	// keeps a loaded machine's handshakes inside the delay.
	const delay = 2 * time.Second
	f := startFixture(t, podHooks(), func(o *webhook.Options) { o.ShutdownDelay = delay })
	review := podReview(t, "before", admissionv1.Create, testPod(nil), nil)
	resp, _ := f.post(t, "/mutate--v1-pod", "application/json", review)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Connection"), "keep-alive while serving")

	stopped := make(chan error, 1)
	begun := time.Now()
	go func() { stopped <- f.server.Stop(context.Background()) }()
	require.Eventually(t, func() bool { return len(f.logs.FilterMessage("webhook server draining").All()) == 1 }, 5*time.Second, time.Millisecond)

	// Every call during the delay is served, each on a connection the
	// server closes after answering.
	for time.Since(begun) < delay/4 {
		resp, _ := f.post(t, "/mutate--v1-pod", "application/json", review)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.True(t, resp.Close, "the server asks the caller to close the connection")
	}
	require.NoError(t, <-stopped)
	assert.GreaterOrEqual(t, time.Since(begun), delay)
	_, err := f.client.Post(f.base+"/mutate--v1-pod", "application/json", bytes.NewReader(review))
	require.Error(t, err, "closed once the delay is over")
}

// A connection that never sent a request holds no work: Stop closes it
// rather than waiting the five seconds net/http gives new connections.
func TestStopDoesNotWaitForConnectionsWithoutARequest(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	conn, err := net.Dial("tcp", f.server.Addr().String())
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	require.Eventually(t, func() bool { return webhook.OpenConns(f.server) == 1 }, 5*time.Second, time.Millisecond)

	began := time.Now()
	require.NoError(t, f.server.Stop(context.Background()))
	assert.Less(t, time.Since(began), 2*time.Second)
}

func TestJSONWithParametersIsServed(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON"} {
		resp, _ := f.post(t, app.PodValidatePath, ct, podReview(t, "c1", admissionv1.Create, testPod(nil), nil))
		assert.Equal(t, http.StatusOK, resp.StatusCode, ct)
	}
}

// startBody opens a connection to the server from the loopback address
// from (on Linux all of 127/8 is loopback) and sends the head of a POST to
// path declaring declared bytes of JSON, then send, from a goroutine: the
// server may refuse the body before it has all of it. The connection is
// closed at the end of the test.
func (f *fixture) startBody(t *testing.T, from, path string, declared int64, send []byte) *tls.Conn {
	t.Helper()
	conn, err := f.dialFrom(from)
	require.NoError(t, err)
	sent := make(chan struct{})
	t.Cleanup(func() {
		_ = conn.Close()
		<-sent
	})
	go func() {
		defer close(sent)
		if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, declared); err != nil {
			return
		}
		_, _ = conn.Write(send) // the server may have refused the rest
	}()
	return conn
}

// dialFrom opens a TLS connection to the server from the loopback address
// from.
func (f *fixture) dialFrom(from string) (*tls.Conn, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca.CertPEM)
	d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := tls.DialWithDialer(d, "tcp", f.server.Addr().String(), &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, fmt.Errorf("dial webhook server from %s: %w", from, err)
	}
	return conn, nil
}

// answer reads the server's answer on conn.
func answer(t *testing.T, conn *tls.Conn) (*http.Response, string) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// operatorMetrics flattens the server's operator_webhook_ metrics as
// gather does controller-runtime's.
func operatorMetrics(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := g.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range families {
		if !strings.HasPrefix(mf.GetName(), "operator_webhook_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

const bodyBytesInFlight = "operator_webhook_body_bytes_in_flight{}"

func bodyBytes(t *testing.T, f *fixture) float64 {
	t.Helper()
	return operatorMetrics(t, f.reg)[bodyBytesInFlight]
}

// When the budget is full, an address that holds its fair share is
// refused at once: a connection reset at accept, a body past its share
// answered 429 with Retry-After; both counted. An address below its share
// is served, and the largest holder's oldest request still reading its
// body is given up: its connection reset, the request counted as evicted
// and as a 429. The fixture's client connects from 127.0.0.1, the holders
// from 127.0.0.2 (on Linux all of 127/8 is loopback).
func TestBudgetGivesANewcomerRoomAndRefusesAHoarder(t *testing.T) {
	t.Parallel()
	const hoarder = "127.0.0.2"
	// 256 KiB with 512 slots keeps half for the first 16 KiB of each
	// body: large parts fill 128 KiB at most. A holder of 78 KiB that sent
	// 70 holds 78 KiB, 62 KiB of it large parts, so two fill the large
	// parts nearly, and a third is past what one address may hold.
	largeBody := func() body { return body{hoarder, 78 << 10, bytes.Repeat([]byte("x"), 70<<10)} }
	smallBody := func() body { return body{hoarder, 1 << 10, []byte(`{"apiVersion":`)} }
	tests := []struct {
		name     string
		mod      func(*webhook.Options)
		holders  []body
		held     float64 // the bytes the holders reserve
		atAccept bool    // the hoarder is refused a connection, not a request
		reason   string  // of the hoarder's refusal
		resource string  // needed by the newcomer
		review   []byte  // the newcomer's
	}{
		{
			// As many connections as request slots: each holder holds
			// both, and the newcomer needs a connection first.
			name:     "connections with requests in flight",
			mod:      func(o *webhook.Options) { o.MaxRequestsInFlight = 4 },
			holders:  []body{smallBody(), smallBody(), smallBody(), smallBody()},
			held:     4 << 10, // each its declared KiB, all it may ever need
			atAccept: true,
			reason:   "client_connections",
			resource: "connections",
			review:   podReview(t, "small", admissionv1.Create, testPod(nil), nil),
		},
		{
			name:     "body bytes in flight",
			mod:      func(o *webhook.Options) { o.MaxBodyBytesInFlight = 256 << 10 },
			holders:  []body{largeBody(), largeBody()},
			held:     2 * 78 << 10,
			reason:   "client_body_bytes",
			resource: "body_bytes",
			review:   podReview(t, "large", admissionv1.Create, hugePod(60<<10), nil),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := startFixture(t, podHooks(), tt.mod)
			var holders []*tls.Conn
			for _, h := range tt.holders {
				holders = append(holders, f.startBody(t, h.from, app.PodMutatePath, h.declared, h.send))
				// One at a time, so that the first is the oldest.
				want := float64(len(holders)) / float64(len(tt.holders)) * tt.held
				require.Eventually(t, func() bool { return bodyBytes(t, f) == want }, 5*time.Second, 5*time.Millisecond, "holder %d's body is being read", len(holders))
			}

			want429 := 1.0 // the request given up
			if tt.atAccept {
				_, err := f.dialFrom(hoarder)
				require.Error(t, err, "the hoarder's connection is reset")
			} else {
				refused := tt.holders[0]
				resp, text := answer(t, f.startBody(t, refused.from, app.PodMutatePath, refused.declared, refused.send))
				assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, text)
				assert.Equal(t, "1", resp.Header.Get("Retry-After"))
				assert.True(t, resp.Close, "the connection closes after the answer")
				assert.Contains(t, text, "from this address")
				want429++
			}

			assert.True(t, f.admit(t, app.PodMutatePath, tt.review).Allowed, "the newcomer is served")
			assertReset(t, holders[0], "the oldest holder")
			for _, c := range holders[1:] {
				require.NoError(t, c.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
				_, err := c.Read(make([]byte, 1))
				var ne net.Error
				assert.True(t, errors.As(err, &ne) && ne.Timeout(), "the other holders are still being read: %v", err)
			}

			got := operatorMetrics(t, f.reg)
			for _, reason := range []string{"requests", "body_bytes", "client_requests", "client_body_bytes"} {
				want := 0.0
				if reason == tt.reason {
					want = 1
				}
				assert.Equal(t, want, got[fmt.Sprintf(`operator_webhook_requests_rejected_total{reason=%q,webhook="/mutate--v1-pod"}`, reason)], reason)
			}
			for _, reason := range []string{"connections", "client_connections"} {
				want := 0.0
				if reason == tt.reason {
					want = 1
				}
				assert.Equal(t, want, got[fmt.Sprintf(`operator_webhook_connections_rejected_total{reason=%q}`, reason)], reason)
			}
			assert.Equal(t, 1.0, got[`operator_webhook_requests_evicted_total{webhook="/mutate--v1-pod"}`])
			assert.Equal(t, 1.0, got[fmt.Sprintf(`operator_webhook_connections_evicted_total{resource=%q}`, tt.resource)])
			require.Eventually(t, func() bool {
				return gather(t, f.reg)[`controller_runtime_webhook_requests_total{code="429",webhook="/mutate--v1-pod"}`] == want429
			}, 5*time.Second, 5*time.Millisecond, "the refused and the given-up requests are 429s")
			assert.LessOrEqual(t, got[bodyBytesInFlight], float64(256<<10))

			// Once the holders are gone, everything they held is back.
			for _, c := range holders {
				_ = c.Close() // the first was reset already
			}
			require.Eventually(t, func() bool { return bodyBytes(t, f) == 0 }, 5*time.Second, 5*time.Millisecond)
			assert.True(t, f.admit(t, app.PodMutatePath, tt.review).Allowed)
			assert.Zero(t, bodyBytes(t, f))
		})
	}
}

// body is what a client sends: the head of a POST declaring declared
// bytes, then send.
type body struct {
	from     string
	declared int64
	send     []byte
}

// assertReset checks that the server has closed conn.
func assertReset(t *testing.T, conn *tls.Conn, what string) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := io.ReadAll(conn)
	var ne net.Error
	assert.False(t, errors.As(err, &ne) && ne.Timeout(), "%s: the server closed its connection", what)
}

// Over HTTP/2 one connection carries many requests, so request slots run
// out before connections: a hoarder at its share of them is answered 429,
// and a newcomer below its share is served in place of the hoarder's
// oldest request, whose connection is reset with every stream on it.
func TestHTTP2StreamsShareRequestSlots(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), func(o *webhook.Options) {
		o.EnableHTTP2 = true
		o.MaxRequestsInFlight = 4
	})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca.CertPEM)
	hoarder := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext,
		ForceAttemptHTTP2: true,
	}}
	t.Cleanup(hoarder.CloseIdleConnections)
	type result struct {
		code  int
		proto int
		err   error
	}
	// send starts a request whose body sends its first bytes and then
	// waits for the end of the test.
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	send := func() <-chan result {
		out := make(chan result, 1)
		pr, pw := io.Pipe()
		go func() {
			if _, err := pw.Write([]byte(`{"apiVersion":`)); err == nil {
				<-done
			}
			_ = pw.Close()
		}()
		req, err := http.NewRequest(http.MethodPost, f.base+app.PodMutatePath, pr)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = 1 << 10
		go func() {
			resp, err := hoarder.Do(req)
			if err != nil {
				out <- result{err: err}
				return
			}
			_ = resp.Body.Close()
			out <- result{code: resp.StatusCode, proto: resp.ProtoMajor}
		}()
		return out
	}
	var streams []<-chan result
	for i := range 4 {
		streams = append(streams, send())
		require.Eventually(t, func() bool { return bodyBytes(t, f) == float64((i+1)<<10) }, 5*time.Second, 5*time.Millisecond, "stream %d's body is being read", i)
	}
	refused := <-send()
	require.NoError(t, refused.err)
	assert.Equal(t, http.StatusTooManyRequests, refused.code, "a fifth stream, at the address's share")
	assert.Equal(t, 2, refused.proto, "the streams share one HTTP/2 connection")
	assert.Equal(t, 1.0, operatorMetrics(t, f.reg)[`operator_webhook_requests_rejected_total{reason="client_requests",webhook="/mutate--v1-pod"}`])

	assert.True(t, f.admit(t, app.PodMutatePath, podReview(t, "u1", admissionv1.Create, testPod(nil), nil)).Allowed, "another address is served")
	for i, s := range streams {
		select {
		case r := <-s:
			assert.Error(t, r.err, "stream %d ends with its connection", i)
		case <-time.After(5 * time.Second):
			t.Fatalf("stream %d outlived its connection", i)
		}
	}
	got := operatorMetrics(t, f.reg)
	assert.Equal(t, 1.0, got[`operator_webhook_connections_evicted_total{resource="requests"}`])
	assert.Equal(t, 4.0, got[`operator_webhook_requests_evicted_total{webhook="/mutate--v1-pod"}`], "every stream of the connection")
	require.Eventually(t, func() bool { return bodyBytes(t, f) == 0 }, 5*time.Second, 5*time.Millisecond, "everything given back")
}

// An address alone may open every connection; past that it is reset at
// accept, counted, and another address that connects takes the hoarder's
// oldest connection that carries no request. Once the hoarder holds less,
// it connects again.
func TestConnectionsAreSharedAmongAddresses(t *testing.T) {
	t.Parallel()
	// Four request slots: four connections.
	f := startFixture(t, podHooks(), func(o *webhook.Options) { o.MaxRequestsInFlight = 4 })
	const hoarder = "127.0.0.2"
	busy := f.startBody(t, hoarder, app.PodMutatePath, 1<<10, []byte(`{"apiVersion":`))
	require.Eventually(t, func() bool { return bodyBytes(t, f) == 1<<10 }, 5*time.Second, 5*time.Millisecond, "the first connection's body is being read")
	var idle []*tls.Conn
	for range 3 {
		conn, err := f.dialFrom(hoarder)
		require.NoError(t, err, "an address alone may open every connection")
		t.Cleanup(func() { _ = conn.Close() })
		idle = append(idle, conn)
	}
	for range 3 {
		_, err := f.dialFrom(hoarder)
		require.Error(t, err, "a fifth connection from one address, alone, of four")
	}
	assert.Equal(t, float64(3), operatorMetrics(t, f.reg)[`operator_webhook_connections_rejected_total{reason="client_connections"}`])

	for i := range 3 {
		assert.True(t, f.admit(t, app.PodMutatePath, podReview(t, fmt.Sprintf("u%d", i), admissionv1.Create, testPod(nil), nil)).Allowed, "another address is served")
	}
	assertReset(t, idle[0], "the hoarder's oldest idle connection")
	assert.Equal(t, float64(1), operatorMetrics(t, f.reg)[`operator_webhook_connections_evicted_total{resource="connections"}`], "one connection taken, then kept alive")
	assert.Equal(t, float64(1<<10), bodyBytes(t, f), "the connection with a request outlasts the idle ones")
	assert.Zero(t, operatorMetrics(t, f.reg)[`operator_webhook_requests_evicted_total{webhook="/mutate--v1-pod"}`])

	require.NoError(t, busy.Close())
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		conn, err := f.dialFrom(hoarder)
		if assert.NoError(c, err) {
			_ = conn.Close()
		}
	}, 5*time.Second, 10*time.Millisecond, "the address connects again once it holds less than its share")
}

// A new connection of an address at its share replaces the address's own
// oldest connection that has carried a request and carries none now: an
// idle keep-alive, or one its client closed that the server has yet to
// read to its end. One that carries a request, or has yet to carry its
// first, is not given up for it.
func TestAConnectionReplacesItsAddresssSpentOne(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), func(o *webhook.Options) { o.MaxRequestsInFlight = 3 })
	const client = "127.0.0.2"
	busy := f.startBody(t, client, app.PodMutatePath, 1<<10, []byte(`{"apiVersion":`))
	require.Eventually(t, func() bool { return bodyBytes(t, f) == 1<<10 }, 5*time.Second, 5*time.Millisecond, "the first connection's body is being read")
	spent, err := f.dialFrom(client)
	require.NoError(t, err)
	t.Cleanup(func() { _ = spent.Close() })
	roundTrip(t, spent, podReview(t, "u1", admissionv1.Create, testPod(nil), nil))
	fresh, err := f.dialFrom(client)
	require.NoError(t, err, "the third of three")
	t.Cleanup(func() { _ = fresh.Close() })

	next, err := f.dialFrom(client)
	require.NoError(t, err, "a fourth of three replaces the spent one")
	t.Cleanup(func() { _ = next.Close() })
	assertReset(t, spent, "the connection that carried a request and carries none")
	roundTrip(t, next, podReview(t, "u2", admissionv1.Create, testPod(nil), nil))
	roundTrip(t, fresh, podReview(t, "u3", admissionv1.Create, testPod(nil), nil))
	assert.Equal(t, float64(1<<10), bodyBytes(t, f), "the connection with a request is kept")

	// fresh and next have carried a request each: both are replaced,
	// the older first.
	for i, old := range []*tls.Conn{fresh, next} {
		conn, err := f.dialFrom(client)
		require.NoError(t, err, "replacing spent connection %d", i)
		t.Cleanup(func() { _ = conn.Close() })
		assertReset(t, old, fmt.Sprintf("spent connection %d", i))
	}
	_, err = f.dialFrom(client)
	require.Error(t, err, "one connection carries a request, the others none yet")
	got := operatorMetrics(t, f.reg)
	assert.Equal(t, float64(3), got[`operator_webhook_connections_evicted_total{resource="connections"}`])
	assert.Equal(t, float64(1), got[`operator_webhook_connections_rejected_total{reason="client_connections"}`])
	require.NoError(t, busy.Close())
}

// roundTrip sends a review on conn and reads the server's answer, which
// must be a 200 that keeps the connection open.
func roundTrip(t *testing.T, conn *tls.Conn, body []byte) {
	t.Helper()
	_, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", app.PodMutatePath, len(body), body)
	require.NoError(t, err)
	resp, text := answer(t, conn)
	require.Equal(t, http.StatusOK, resp.StatusCode, text)
	require.False(t, resp.Close, "the connection is kept alive")
	require.NoError(t, conn.SetReadDeadline(time.Time{}))
}

// However few idle connections a client keeps and however fast it opens
// new ones, none is refused while its calls could not fill the server.
// The API server keeps 25 idle connections per webhook host and opens one
// for every call beyond them; Go's transport also dials some it never
// uses and closes others as it goes, so it may hold about twice as many
// connections as it makes calls at once, hence callers at most a quarter
// of the server's connections.
func TestChurnedConnectionsAreNeverRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		slots   int // the server's MaxRequestsInFlight, 0 for the default
		callers int
		idle    int // the client's idle connections per host; -1 keeps none
	}{
		{name: "the API server's idle pool, 64 callers", callers: 64, idle: 25},
		{name: "the API server's idle pool, 200 callers", callers: 200, idle: 25},
		{name: "one idle connection", slots: 64, callers: 16, idle: 1},
		{name: "none kept alive", slots: 64, callers: 16, idle: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := startFixture(t, podHooks(), func(o *webhook.Options) { o.MaxRequestsInFlight = tt.slots })
			client := newClient(f.ca)
			tr := client.Transport.(*http.Transport)
			tr.MaxIdleConnsPerHost, tr.DisableKeepAlives = max(tt.idle, 0), tt.idle < 0
			t.Cleanup(client.CloseIdleConnections)
			const calls = 20
			body := podReview(t, "u1", admissionv1.Create, testPod(nil), nil)
			var failed atomic.Int64
			var wg sync.WaitGroup
			for c := range tt.callers {
				wg.Go(func() {
					for i := range calls {
						if err := postReview(client, f.base+app.PodMutatePath, body); err != nil {
							if failed.Add(1) == 1 {
								t.Errorf("caller %d, call %d: %v", c, i, err)
							}
						}
					}
				})
			}
			wg.Wait()
			assert.Zero(t, failed.Load(), "calls failed of %d", tt.callers*calls)
			rejected := operatorMetrics(t, f.reg)
			for _, reason := range []string{"client_connections", "connections"} {
				assert.Zero(t, rejected[`operator_webhook_connections_rejected_total{reason="`+reason+`"}`], reason)
			}
		})
	}
}

// postReview posts a review with client and checks that it was answered
// with a review, without the testing.T a caller goroutine may not stop.
func postReview(client *http.Client, url string, body []byte) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, data)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &review); err != nil {
		return fmt.Errorf("not a review: %w", err)
	}
	if review.Response == nil || !review.Response.Allowed {
		return fmt.Errorf("not an allowed review: %s", data)
	}
	return nil
}

// A declared length the server will not read is refused before a byte of
// the body is sent.
func TestOversizeDeclaredLengthIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mod      func(*webhook.Options)
		declared int64
		limit    string
	}{
		{name: "past the request limit", declared: webhook.DefaultMaxRequestBytes + 1, limit: "7340032"},
		// 256 KiB, half of it reserved for the first 16 KiB of each body:
		// no body can be larger than 144 KiB, even from an address alone.
		{name: "past what the budget can hold", mod: func(o *webhook.Options) { o.MaxBodyBytesInFlight = 256 << 10 }, declared: 200 << 10, limit: "147456"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := startFixture(t, podHooks(), tt.mod)
			resp, text := answer(t, f.startBody(t, "127.0.0.1", app.PodMutatePath, tt.declared, nil))
			assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
			assert.Contains(t, text, "exceeds the limit of "+tt.limit)
			assert.Zero(t, bodyBytes(t, f), "nothing reserved")
		})
	}
}

// A body's buffer grows with the bytes that arrive, not with the length it
// declares, and whatever it held goes back when the client goes away in
// the middle of it.
func TestBodyHoldsWhatArrivedAndGivesItBack(t *testing.T) {
	t.Parallel()
	f := startFixture(t, podHooks(), nil)
	conn := f.startBody(t, "127.0.0.1", app.PodMutatePath, webhook.DefaultMaxRequestBytes, []byte(`{"apiVersi`))
	require.Eventually(t, func() bool { return bodyBytes(t, f) > 0 }, 5*time.Second, 5*time.Millisecond)
	assert.LessOrEqual(t, bodyBytes(t, f), float64(4<<10), "ten bytes sent of a declared 7 MiB: one first chunk held")
	assert.Equal(t, float64(1), gather(t, f.reg)[`controller_runtime_webhook_requests_in_flight{webhook="/mutate--v1-pod"}`])

	require.NoError(t, conn.Close())
	require.Eventually(t, func() bool {
		return bodyBytes(t, f) == 0 && gather(t, f.reg)[`controller_runtime_webhook_requests_in_flight{webhook="/mutate--v1-pod"}`] == 0
	}, 5*time.Second, 5*time.Millisecond, "the budget is given back when the client goes away")
	assert.Equal(t, float64(1), gather(t, f.reg)[`controller_runtime_webhook_requests_total{code="400",webhook="/mutate--v1-pod"}`], "the cut body is a bad request")

	for i := range 3 {
		f.admit(t, app.PodMutatePath, podReview(t, fmt.Sprintf("u%d", i), admissionv1.Create, testPod(nil), nil))
	}
	assert.Zero(t, bodyBytes(t, f), "served requests give everything back")
}
