package main

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatCPU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stat    string
		want    time.Duration
		wantErr string
	}{
		{"utime plus stime", "42 (operator) S 1 42 42 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 9 0 100 1000 10", 2870 * time.Millisecond, ""},
		{"command with spaces and parentheses", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1", 70 * time.Millisecond, ""},
		{"no command", "42 S 1", 0, "malformed"},
		{"short", "42 (x) S 1 2 3", 0, "short"},
		{"not a number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 ten 4 0", 0, "invalid syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseStatCPU(tt.stat)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCPUTimeOfThisProcessGrows(t *testing.T) {
	t.Parallel()
	before, err := cpuTime(os.Getpid())
	require.NoError(t, err)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		now, err := cpuTime(os.Getpid())
		require.NoError(t, err)
		if now > before {
			return
		}
	}
	t.Fatal("no CPU time counted after 5 s of spinning")
}
