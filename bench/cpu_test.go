package main

import (
	"context"
	"errors"
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

func TestParseMachineCPU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stat    string
		want    machineCPU
		wantErr string
	}{
		{"user to steal, guest left out", "cpu  100 2 30 800 4 0 6 58 9 1\ncpu0 50 1 15 400 2 0 3 29 4 0\n", machineCPU{total: 1000, steal: 58}, ""},
		{"no steal field", "cpu  100 2 30 800 4 0 6\n", machineCPU{}, "no cpu line"},
		{"a CPU's line first", "cpu0 100 2 30 800 4 0 6 58\n", machineCPU{}, "no cpu line"},
		{"not a number", "cpu  100 2 30 800 4 0 6 many\n", machineCPU{}, "invalid syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseMachineCPU(tt.stat)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStealSince(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		before, after machineCPU
		want          string
	}{
		{"a quarter taken", machineCPU{total: 1000, steal: 10}, machineCPU{total: 1400, steal: 110}, "steal=25.0%"},
		{"none taken", machineCPU{total: 1000, steal: 10}, machineCPU{total: 1400, steal: 10}, "steal=0.0%"},
		{"no time passed", machineCPU{total: 1000, steal: 10}, machineCPU{total: 1000, steal: 10}, "steal=0.0%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.after.stealSince(tt.before).String())
		})
	}
}

// The machine's own counters parse, and the total grows while this test
// spins.
func TestMachineCPUOfThisMachine(t *testing.T) {
	t.Parallel()
	before, err := readMachineCPU()
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		now, err := readMachineCPU()
		require.NoError(t, err)
		return now.total > before.total && now.steal >= before.steal
	}, 10*time.Second, time.Millisecond)
}

// A measured turn ends with steal, whatever the workload measured; a
// workload's error is the turn's.
func TestTurnEndsWithSteal(t *testing.T) {
	t.Parallel()
	measured := job{workload: workload{name: "w", run: func(context.Context, *env, string, string) (result, error) {
		return result{countOf("done", 3)}, nil
	}}}
	r, err := measured.turn(t.Context(), nil, "bin", "A")
	require.NoError(t, err)
	require.Len(t, r, 2)
	assert.Equal(t, "done=3", r[0].String())
	assert.Equal(t, "steal", r[1].name)
	assert.Equal(t, percent, r[1].unit)
	assert.GreaterOrEqual(t, r[1].value, 0.0)
	assert.LessOrEqual(t, r[1].value, 1.0)

	failed := job{workload: workload{name: "w", run: func(context.Context, *env, string, string) (result, error) {
		return nil, errors.New("operator exited")
	}}}
	_, err = failed.turn(t.Context(), nil, "bin", "A")
	require.EqualError(t, err, "operator exited")
}
