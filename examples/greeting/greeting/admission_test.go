package greeting_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	greetingv1 "github.com/hexagonal-operator/operator/examples/greeting/api/v1"
	"github.com/hexagonal-operator/operator/examples/greeting/greeting"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestDefaulter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec greetingv1.GreetingSpec
		want greetingv1.GreetingSpec
	}{
		{
			name: "without salutation gets the default",
			spec: greetingv1.GreetingSpec{Name: "World"},
			want: greetingv1.GreetingSpec{Name: "World", Salutation: greeting.DefaultSalutation},
		},
		{
			name: "a salutation is kept",
			spec: greetingv1.GreetingSpec{Name: "World", Salutation: "Howdy"},
			want: greetingv1.GreetingSpec{Name: "World", Salutation: "Howdy"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := newGreeting(tt.spec, greetingv1.GreetingStatus{})
			meta := obj.ObjectMeta

			warnings, err := greeting.NewDefaulter().Default(context.Background(), obj)

			require.NoError(t, err)
			assert.Empty(t, warnings)
			assert.Equal(t, tt.want, obj.Spec)
			assert.Equal(t, meta, obj.ObjectMeta, "only the spec changes")
		})
	}
}

func TestValidator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		spec       greetingv1.GreetingSpec
		wantDenied string // the message's substring; "" when allowed
	}{
		{name: "a name and a salutation", spec: greetingv1.GreetingSpec{Name: "World", Salutation: "Hello"}},
		{name: "a name alone", spec: greetingv1.GreetingSpec{Name: "World"}},
		{name: "63 characters of name", spec: greetingv1.GreetingSpec{Name: strings.Repeat("a", 63)}},
		{name: "63 characters of name, not bytes", spec: greetingv1.GreetingSpec{Name: strings.Repeat("é", 63)}},
		{name: "32 characters of salutation", spec: greetingv1.GreetingSpec{Name: "x", Salutation: strings.Repeat("b", 32)}},
		{name: "an empty name", spec: greetingv1.GreetingSpec{Salutation: "Hello"}, wantDenied: "spec.name is required"},
		{name: "nothing", spec: greetingv1.GreetingSpec{}, wantDenied: "spec.name is required"},
		{name: "64 characters of name", spec: greetingv1.GreetingSpec{Name: strings.Repeat("a", 64)}, wantDenied: "spec.name has 64 characters, more than 63"},
		{name: "33 characters of salutation", spec: greetingv1.GreetingSpec{Name: "x", Salutation: strings.Repeat("b", 33)}, wantDenied: "spec.salutation has 33 characters, more than 32"},
	}
	ctx := context.Background()
	v := greeting.NewValidator()
	old := newGreeting(greetingv1.GreetingSpec{Name: "Old", Salutation: "Hi"}, greetingv1.GreetingStatus{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := newGreeting(tt.spec, greetingv1.GreetingStatus{})

			_, createErr := v.ValidateCreate(ctx, obj)
			_, updateErr := v.ValidateUpdate(ctx, old, obj)

			for _, err := range []error{createErr, updateErr} {
				if tt.wantDenied == "" {
					assert.NoError(t, err)
					continue
				}
				var d *ports.DeniedError
				require.True(t, errors.As(err, &d), "a refusal is ports.Denied, not %v", err)
				assert.Contains(t, d.Message, tt.wantDenied)
			}
		})
	}
	_, err := v.ValidateDelete(ctx, old)
	assert.NoError(t, err)
}
