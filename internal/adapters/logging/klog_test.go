package logging_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"k8s.io/klog/v2"

	"github.com/hexagonal-operator/operator/internal/adapters/logging"
)

// The klog tests are not parallel: klog is process-global.

func TestRedirectKlog(t *testing.T) {
	var first, second syncBuffer
	z1, err := logging.New(logging.Options{Level: "4", Output: &first})
	require.NoError(t, err)
	z2, err := logging.New(logging.Options{Output: &second})
	require.NoError(t, err)

	restore1 := logging.RedirectKlog(z1)
	klog.Background().Info("structured", "lock", "default/leader")
	klog.FromContext(context.Background()).V(4).Info("verbose")
	klog.InfoS("infos")

	restore2 := logging.RedirectKlog(z2)
	klog.Background().Info("to the newest")
	klog.Background().V(4).Info("not at info")
	restore2()
	klog.Background().Info("back to the first")
	restore1()
	restore1() // idempotent
	klog.Background().Info("dropped")

	msgs := func(b *syncBuffer) []string {
		var out []string
		for _, e := range b.entries(t) {
			assert.Equal(t, "klog", e["logger"])
			out = append(out, e["msg"].(string))
		}
		return out
	}
	assert.Equal(t, []string{"structured", "verbose", "infos", "back to the first"}, msgs(&first))
	assert.Equal(t, []string{"to the newest"}, msgs(&second))
	assert.Equal(t, "default/leader", first.entries(t)[0]["lock"])
}

func TestModule(t *testing.T) {
	var out syncBuffer
	app := fxtest.New(t,
		logging.FxLogger,
		fx.Supply(logging.Options{Level: "debug", Output: &out}),
		logging.Module,
	)
	app.RequireStart()
	klog.Background().Info("from client-go")
	app.RequireStop()
	klog.Background().Info("after stop")

	var klogMsgs []string
	var fxEvents int
	for _, e := range out.entries(t) {
		switch e["logger"] {
		case "klog":
			klogMsgs = append(klogMsgs, e["msg"].(string))
		case "fx":
			fxEvents++
			caller, _ := e["caller"].(string)
			assert.NotContains(t, caller, "fxevent", "zap's caller clashes with fx's")
		}
	}
	assert.Equal(t, []string{"from client-go"}, klogMsgs)
	assert.Positive(t, fxEvents, "fx events were not logged through zap")
}
