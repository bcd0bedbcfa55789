package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := func(name string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
		return p
	}
	a, b, c := exe("a"), exe("b"), exe("c")
	notExecutable := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(notExecutable, nil, 0o644))

	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, o options)
		wantErr string
	}{
		{name: "one binary", args: []string{"--operator=" + a}, check: func(t *testing.T, o options) {
			assert.Equal(t, a, o.operator)
			assert.Empty(t, o.ab)
			assert.Equal(t, []scaleSize{{10000, 1}, {30000, 1}}, o.scaleN)
		}},
		{name: "several to compare, in order", args: []string{"--operator=" + a, "--ab=" + c + ", " + b}, check: func(t *testing.T, o options) {
			assert.Equal(t, []string{c, b}, o.ab)
		}},
		{name: "scale sizes", args: []string{"--operator=" + a, "--workloads=scale", "--scale-n=100,2000x3"}, check: func(t *testing.T, o options) {
			assert.Equal(t, []scaleSize{{100, 1}, {2000, 3}}, o.scaleN)
			assert.Equal(t, []string{"scale"}, o.workloads)
		}},
		{name: "a binary to compare that is not there", args: []string{"--operator=" + a, "--ab=" + b + "," + filepath.Join(dir, "missing")}, wantErr: "missing"},
		{name: "a binary that cannot run", args: []string{"--operator=" + notExecutable}, wantErr: "plain"},
		{name: "a bad scale count", args: []string{"--operator=" + a, "--scale-n=10,ten"}, wantErr: `"ten" is not a positive count`},
		{name: "a bad count of Pods per ReplicaSet", args: []string{"--operator=" + a, "--scale-n=10x0"}, wantErr: `"10x0" is not a positive count of Pods per ReplicaSet`},
		{name: "a plot without the scale workload", args: []string{"--operator=" + a, "--workloads=memory", "--plot=x.svg"}, wantErr: "--plot"},
		{name: "a chaos interval", args: []string{"--operator=" + a, "--chaos-interval=2s"}, check: func(t *testing.T, o options) {
			assert.Equal(t, 2*time.Second, o.chaosInterval)
		}},
		{name: "a chaos interval under a second", args: []string{"--operator=" + a, "--chaos-interval=500ms"}, wantErr: "--chaos-interval"},
		{name: "ChaosPods in the memory workload", args: []string{"--operator=" + a, "--workloads=memory", "--memory-chaospods=1000"}, check: func(t *testing.T, o options) {
			assert.Equal(t, 1000, o.memoryChaosPods)
		}},
		{name: "a negative count of ChaosPods", args: []string{"--operator=" + a, "--memory-chaospods=-1"}, wantErr: "--memory-chaospods"},
		{name: "a finer heap profile", args: []string{"--operator=" + a, "--workloads=memory", "--memprofilerate=4096"}, check: func(t *testing.T, o options) {
			assert.Equal(t, 4096, o.memProfileRate)
		}},
		{name: "a negative profile rate", args: []string{"--operator=" + a, "--memprofilerate=-1"}, wantErr: "--memprofilerate"},
		{name: "an unknown workload", args: []string{"--operator=" + a, "--workloads=nonesuch"}, wantErr: "nonesuch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, err := parseFlags(tt.args)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, o)
		})
	}
}

// Paths below the working directory are written relative to it, so a
// committed log does not name the checkout it ran in; others stay whole.
func TestLogsWritePathsRelativeToTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	tests := []struct{ in, want string }{
		{"go run ./bench --operator=" + wd + "/bin/operator --ab=" + wd + "/bin/crbaseline-expert", "go run ./bench --operator=bin/operator --ab=bin/crbaseline-expert"},
		{"memory A (" + wd + "/bin/operator): heap", "memory A (bin/operator): heap"},
		{"elsewhere /usr/local/bin/operator", "elsewhere /usr/local/bin/operator"},
		{"the folder itself " + wd, "the folder itself " + wd},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, relativeTo(wd, tc.in))
		assert.Equal(t, tc.in, relativeTo("", tc.in), "no working directory known")
	}
}
