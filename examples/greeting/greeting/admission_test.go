package greeting_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/examples/greeting/greeting"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func request(op ports.Operation, spec *greetingv1.GreetingSpec) ports.AdmissionRequest[greetingv1.Greeting] {
	req := ports.AdmissionRequest[greetingv1.Greeting]{Operation: op, Namespace: key.Namespace, Name: key.Name}
	if spec != nil {
		req.Object = newGreeting(*spec, greetingv1.GreetingStatus{})
	}
	if op == ports.OperationUpdate || op == ports.OperationDelete {
		req.OldObject = newGreeting(greetingv1.GreetingSpec{Name: "Old", Salutation: "Hi"}, greetingv1.GreetingStatus{})
	}
	return req
}

func TestDefaulter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		op      ports.Operation
		spec    *greetingv1.GreetingSpec
		want    *greetingv1.GreetingSpec // nil: admitted unchanged
		wantErr bool
	}{
		{
			name: "create without salutation gets the default",
			op:   ports.OperationCreate, spec: &greetingv1.GreetingSpec{Name: "World"},
			want: &greetingv1.GreetingSpec{Name: "World", Salutation: greeting.DefaultSalutation},
		},
		{
			name: "update without salutation gets the default",
			op:   ports.OperationUpdate, spec: &greetingv1.GreetingSpec{Name: "World"},
			want: &greetingv1.GreetingSpec{Name: "World", Salutation: "Hello"},
		},
		{name: "a salutation is kept", op: ports.OperationCreate, spec: &greetingv1.GreetingSpec{Name: "World", Salutation: "Howdy"}},
		{name: "delete is admitted", op: ports.OperationDelete},
		{name: "create without an object cannot be decided", op: ports.OperationCreate, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := request(tt.op, tt.spec)
			var before *greetingv1.Greeting
			if req.Object != nil {
				before = req.Object.DeepCopy()
			}

			m, err := greeting.NewDefaulter().Mutate(context.Background(), req)

			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.True(t, m.Allowed)
			assert.Equal(t, before, req.Object, "the request's object is not modified")
			if tt.want == nil {
				assert.Nil(t, m.Object)
				return
			}
			require.NotNil(t, m.Object)
			assert.Equal(t, *tt.want, m.Object.Spec)
			assert.Equal(t, req.Object.ObjectMeta, m.Object.ObjectMeta, "only the spec changes")
		})
	}
}

func TestValidator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		op         ports.Operation
		spec       *greetingv1.GreetingSpec
		wantDenied string // the message's substring; "" when allowed
		wantErr    bool
	}{
		{name: "a name and a salutation", op: ports.OperationCreate, spec: &greetingv1.GreetingSpec{Name: "World", Salutation: "Hello"}},
		{name: "a name alone", op: ports.OperationCreate, spec: &greetingv1.GreetingSpec{Name: "World"}},
		{name: "63 characters of name", op: ports.OperationCreate, spec: &greetingv1.GreetingSpec{Name: strings.Repeat("a", 63)}},
		{name: "63 characters of name, not bytes", op: ports.OperationCreate, spec: &greetingv1.GreetingSpec{Name: strings.Repeat("é", 63)}},
		{name: "32 characters of salutation", op: ports.OperationUpdate, spec: &greetingv1.GreetingSpec{Name: "x", Salutation: strings.Repeat("b", 32)}},
		{
			name: "an empty name", op: ports.OperationCreate, spec: &greetingv1.GreetingSpec{Salutation: "Hello"},
			wantDenied: "spec.name is required",
		},
		{
			name: "an empty name on update", op: ports.OperationUpdate, spec: &greetingv1.GreetingSpec{},
			wantDenied: "spec.name is required",
		},
		{
			name: "64 characters of name", op: ports.OperationCreate, spec: &greetingv1.GreetingSpec{Name: strings.Repeat("a", 64)},
			wantDenied: "spec.name has 64 characters, more than 63",
		},
		{
			name: "33 characters of salutation", op: ports.OperationCreate, spec: &greetingv1.GreetingSpec{Name: "x", Salutation: strings.Repeat("b", 33)},
			wantDenied: "spec.salutation has 33 characters, more than 32",
		},
		{name: "delete is admitted", op: ports.OperationDelete},
		{name: "update without an object cannot be decided", op: ports.OperationUpdate, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := request(tt.op, tt.spec)

			v, err := greeting.NewValidator().Validate(context.Background(), req)

			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err, "a refusal is a verdict, not an error")
			if tt.wantDenied == "" {
				assert.Equal(t, ports.Allow(), v)
				return
			}
			assert.False(t, v.Allowed)
			assert.Contains(t, v.Message, tt.wantDenied)
		})
	}
}
