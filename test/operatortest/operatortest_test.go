package operatortest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestClientConfigPointsAtTheLocalServer(t *testing.T) {
	t.Parallel()
	path := "/mutate-greetings-example-hexagonal-operator-io-v1-greeting"
	ca := []byte("ca")
	tests := []struct {
		name string
		in   admissionregistrationv1.WebhookClientConfig
		want string
	}{
		{
			name: "a service reference keeps its path",
			in:   admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "svc", Path: &path}},
			want: "https://127.0.0.1:9443" + path,
		},
		{
			name: "without a path, the root",
			in:   admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "svc"}},
			want: "https://127.0.0.1:9443/",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := clientConfig("127.0.0.1:9443", tt.in, ca)
			require.NotNil(t, got.URL)
			assert.Equal(t, tt.want, *got.URL)
			assert.Nil(t, got.Service)
			assert.Equal(t, ca, got.CABundle)
		})
	}
}

func TestCodeBlock(t *testing.T) {
	t.Parallel()
	doc := filepath.Join(t.TempDir(), "guide.md")
	require.NoError(t, os.WriteFile(doc, []byte("# Guide\n\n```go\nnot this\n```\n\n<!-- wiring:x -->\n\nText.\n\n```go\n// a comment\nvar x = f(\n\n\ta, b)\n```\n\n```go\nnor this\n```\n"), 0o600))

	assert.Equal(t, []string{"var x = f(", "a, b)"}, CodeBlock(t, doc, "<!-- wiring:x -->"))
	assert.Equal(t, "// a comment\nvar x = f(\n\n\ta, b)\n", FencedBlock(t, doc, "<!-- wiring:x -->", "go"))
}
