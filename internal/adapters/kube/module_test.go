package kube_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hexagonal-operator/operator/internal/adapters/kube"
	"github.com/hexagonal-operator/operator/internal/kubeclient"
	"github.com/hexagonal-operator/operator/internal/ports"
)

func TestModule(t *testing.T) {
	t.Parallel()
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	options := fx.Options(kube.Module, fx.Supply(cfg, kube.Options{}), fx.NopLogger)
	require.NoError(t, fx.ValidateApp(options))

	var (
		labeler ports.ReplicaSetLabeler
		k       kubeclient.Interface
		m       metadata.Interface
		d       dynamic.Interface
	)
	app := fxtest.New(t, options, fx.Populate(&labeler, &k, &m, &d))
	app.RequireStart().RequireStop()
	assert.IsType(t, &kube.ReplicaSetWriter{}, labeler)
	assert.NotNil(t, k)
	assert.NotNil(t, m)
	assert.NotNil(t, d)
}
