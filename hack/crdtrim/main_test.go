package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

const crd = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: A Thing.
        properties:
          spec:
            description: What the user wants.
            properties:
              template:
                description: The Pod to run.
                properties:
                  metadata:
                    description: Standard object metadata.
                    type: object
                  spec:
                    description: The Pod's spec.
                    properties:
                      containers:
                        description: The containers.
                        items:
                          description: One container.
                          properties:
                            name:
                              description: Its name.
                              type: string
                          required:
                          - name
                          type: object
                        type: array
                    type: object
                type: object
              when:
                description: When to act.
                format: date-time
                type: string
            type: object
        type: object
    served: true
    storage: true
`

func TestTrimDropsDescriptionsBelowTheEmbeddedPropertyOnly(t *testing.T) {
	t.Parallel()
	out, err := trim([]byte(crd), []string{"spec.template"})
	require.NoError(t, err)
	text := string(out)
	for _, kept := range []string{"A Thing.", "What the user wants.", "The Pod to run.", "When to act."} {
		assert.Contains(t, text, kept)
	}
	for _, dropped := range []string{"Standard object metadata.", "The Pod's spec.", "The containers.", "One container.", "Its name."} {
		assert.NotContains(t, text, dropped)
	}
	// Types and validation stay.
	var got, want map[string]any
	require.NoError(t, yaml.Unmarshal(out, &got))
	require.NoError(t, yaml.Unmarshal([]byte(strings.NewReplacer(
		"description: Standard object metadata.\n", "",
	).Replace(crd)), &want))
	container := func(m map[string]any) any {
		v := m["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
		s := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
		for _, p := range []string{"spec", "template", "spec", "containers"} {
			s = s["properties"].(map[string]any)[p].(map[string]any)
		}
		return s["items"].(map[string]any)["required"]
	}
	assert.Equal(t, container(want), container(got))
	assert.True(t, strings.HasPrefix(text, "---\n"), "written as controller-gen writes")
}

func TestTrimIsIdempotent(t *testing.T) {
	t.Parallel()
	once, err := trim([]byte(crd), []string{"spec.template"})
	require.NoError(t, err)
	twice, err := trim(once, []string{"spec.template"})
	require.NoError(t, err)
	assert.Equal(t, string(once), string(twice))
}

func TestTrimFailsOnAPathNoVersionHas(t *testing.T) {
	t.Parallel()
	_, err := trim([]byte(crd), []string{"spec.podTemplate"})
	require.ErrorContains(t, err, "spec.podTemplate")
	_, err = trim([]byte("kind: ConfigMap\n"), []string{"spec.template"})
	require.ErrorContains(t, err, "want CustomResourceDefinition")
}

func TestRunRewritesFilesInPlace(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "crd.yaml")
	require.NoError(t, os.WriteFile(file, []byte(crd), 0o644))
	var log strings.Builder
	require.NoError(t, run([]string{"-embedded", "spec.template", file}, &log))
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "The containers.")
	assert.Contains(t, log.String(), "bytes")
	require.Error(t, run([]string{file}, &log), "no -embedded")
}
