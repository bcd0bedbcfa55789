package main

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
)

// TestParseFlagsModes: the flags pick the mode, --priority-queue reaches
// the manager's options in the expert mode only, and contradictions are
// refused.
func TestParseFlagsModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		args              []string
		wantErr           string
		wantPriorityQueue *bool
		wantRaw           bool
		wantDeepCopyOff   bool
	}{
		{name: "default"},
		{name: "tuned", args: []string{"--tuned"}},
		{name: "expert", args: []string{"--expert"}, wantPriorityQueue: ptr.To(true), wantRaw: true, wantDeepCopyOff: true},
		{name: "expert fifo", args: []string{"--expert", "--priority-queue=false"}, wantPriorityQueue: ptr.To(false), wantRaw: true, wantDeepCopyOff: true},
		{name: "priority queue without expert", args: []string{"--tuned", "--priority-queue=false"}, wantErr: "--priority-queue needs --expert"},
		{name: "tuned and expert", args: []string{"--tuned", "--expert"}, wantErr: "exclude each other"},
		{name: "unknown controller", args: []string{"--controllers=deployment"}, wantErr: "unknown controller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("crbaseline", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			s, err := parseFlags(fs, tt.args)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			opts, objects := managerOptions(s)
			assert.NotNil(t, objects)
			assert.NotNil(t, opts.Cache.NewInformer, "operator_cache_objects sees every informer")
			assert.Equal(t, tt.wantPriorityQueue, opts.Controller.UsePriorityQueue)
			assert.Equal(t, tt.wantRaw, s.mode.rawPodMutator)
			assert.Equal(t, tt.wantDeepCopyOff, ptr.Deref(opts.Cache.DefaultUnsafeDisableDeepCopy, false))
		})
	}
}
