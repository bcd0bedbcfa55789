package webhook

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"
)

// Objects decode as the API server decodes them: field names match
// exactly (encoding/json would also take "Annotations"), unknown fields
// are dropped, and errors do not quote the body.
func TestDecodeObjectMatchesFieldNamesExactly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		raw             string
		wantAnnotations map[string]string
		wantErr         string
	}{
		{"exact names", `{"metadata":{"annotations":{"a":"b"}}}`, map[string]string{"a": "b"}, ""},
		{"another case is another field", `{"Metadata":{"annotations":{"a":"b"}},"metadata":{"Annotations":{"c":"d"}}}`, nil, ""},
		{"unknown fields", `{"metadata":{"annotations":{"a":"b"},"future":1},"later":{}}`, map[string]string{"a": "b"}, ""},
		{"escaped value", `{"metadata":{"annotations":{"a":"\u0062\n"}}}`, map[string]string{"a": "b\n"}, ""},
		{"wrong type", `{"metadata":{"annotations":{"a":1}}}`, nil, "decode request.object"},
		{"trailing data", `{"metadata":{}} {}`, nil, "decode request.object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod, err := decodeObject[corev1.Pod]([]byte(tt.raw), "object", false)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), "error found in #", "the error quotes the body")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantAnnotations, pod.Annotations)
		})
	}
}

// A metadata-only decode gives the ObjectMeta a whole decode gives, every
// field of it (filled at random, with the rest of the Pod), and nothing
// else of the object.
func TestDecodeMetadataOnlyKeepsEveryMetadataField(t *testing.T) {
	t.Parallel()
	f := randfill.NewWithSeed(1).NilChance(0.2).NumElements(1, 3).Funcs(
		// Decoding always gives times at second precision in UTC, and a
		// quantity its canonical form; neither is this test's concern.
		func(tm *metav1.Time, c randfill.Continue) { *tm = metav1.Unix(c.Int63n(1<<31), 0).Rfc3339Copy() },
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1000), resource.DecimalSI)
		},
		func(raw *runtime.RawExtension, _ randfill.Continue) { raw.Raw = []byte(`{"a":1}`) },
		func(fields *metav1.FieldsV1, _ randfill.Continue) { fields.SetRawBytes([]byte(`{"f:metadata":{}}`)) },
	)
	for i := range 50 {
		var pod corev1.Pod
		f.Fill(&pod)
		raw, err := json.Marshal(&pod)
		require.NoError(t, err)
		whole, err := decodeObject[corev1.Pod](raw, "object", false)
		require.NoError(t, err, "pod %d", i)
		meta, err := decodeObject[corev1.Pod](raw, "object", true)
		require.NoError(t, err, "pod %d", i)
		assert.Equal(t, whole.ObjectMeta, meta.ObjectMeta, "pod %d", i)
		assert.Equal(t, corev1.Pod{ObjectMeta: whole.ObjectMeta}, *meta, "pod %d: more than metadata decoded", i)
	}
}

// Patches are spelled byte for byte as jsonpatch.Operation's own encoding
// spells them, whatever the operation and value.
func TestEncodePatchSpellsOperationsAsJSONPatchDoes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ops  []jsonpatch.Operation
	}{
		{"none", []jsonpatch.Operation{}},
		{"add a string", []jsonpatch.Operation{{Operation: "add", Path: "/metadata/annotations/a~1b", Value: "foo"}}},
		{"add a map, keys sorted", []jsonpatch.Operation{{Operation: "add", Path: "/metadata/labels", Value: map[string]any{"z": "1", "a": "2"}}}},
		{"escapes", []jsonpatch.Operation{{Operation: "replace", Path: "/metadata/annotations/x", Value: "<a href=\"&\">\u2028\n\x01é</a>"}}},
		{"add and replace keep a null value", []jsonpatch.Operation{{Operation: "add", Path: "/spec/x"}, {Operation: "replace", Path: "/spec/y"}}},
		{"remove has no value", []jsonpatch.Operation{{Operation: "remove", Path: "/metadata/labels/a"}}},
		{"numbers, lists, objects", []jsonpatch.Operation{
			{Operation: "add", Path: "/spec/replicas", Value: float64(3)},
			{Operation: "replace", Path: "/spec/containers/0", Value: map[string]any{"name": "web", "ports": []any{float64(80), true, nil}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(tt.ops)
			require.NoError(t, err)

			got, err := encodePatch(tt.ops)

			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

// BenchmarkDecodeReview decodes the AdmissionReview of a Pod create as the
// API server sends it (managedFields, a container with resources, probes,
// mounts and environment, tolerations) with the server's decoder and with
// encoding/json, for the comparison docs/performance.md quotes.
func BenchmarkDecodeReview(b *testing.B) {
	body := realisticPodReview(b)
	decoders := []struct {
		name      string
		unmarshal func([]byte, any) error
	}{
		{"json-iterator", unmarshal},
		{"encoding-json", json.Unmarshal},
	}
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var review admissionv1.AdmissionReview
				if err := d.unmarshal(body, &review); err != nil {
					b.Fatal(err)
				}
				var pod corev1.Pod
				if err := d.unmarshal(review.Request.Object.Raw, &pod); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func realisticPodReview(b *testing.B) []byte {
	b.Helper()
	pod := corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "web-7c9f8d-", Namespace: "shop",
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7c9f8d", "tier": "frontend"},
			Annotations:     map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-12-06T00:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7c9f8d", UID: "0b4c0d8e-5f4e-4a8e-9a51-6f2b1c3d4e5f", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}`)}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "web", Image: "registry.example/shop/web:1.42.0",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env:   []corev1.EnvVar{{Name: "MODE", Value: "production"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}, PeriodSeconds: 10},
				VolumeMounts:   []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			}},
			ServiceAccountName: "default",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
		},
	}
	raw, err := json.Marshal(&pod)
	require.NoError(b, err)
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "705ab4f5-6393-11e8-b7cc-42010a800002", Operation: admissionv1.Create,
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Namespace: "shop", UserInfo: authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:replicaset-controller"},
			Object: runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(&review)
	require.NoError(b, err)
	return body
}
