package logging_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/hexagonal-operator/operator/internal/adapters/logging"
)

// syncBuffer collects log output written from any goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// entries decodes JSON lines.
func (b *syncBuffer) entries(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		var e map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), sc.Text())
		out = append(out, e)
	}
	return out
}

func TestParseLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		devel   bool
		want    zapcore.Level
		wantErr bool
	}{
		{in: "", want: zapcore.InfoLevel},
		{in: "", devel: true, want: zapcore.DebugLevel},
		{in: "debug", want: zapcore.DebugLevel},
		{in: "info", devel: true, want: zapcore.InfoLevel},
		{in: "warn", want: zapcore.WarnLevel},
		{in: "error", want: zapcore.ErrorLevel},
		{in: "ERROR", want: zapcore.ErrorLevel},
		{in: "0", want: zapcore.InfoLevel},
		{in: "4", want: zapcore.Level(-4)},
		{in: "1000", want: zapcore.Level(-127)},
		{in: "-1", wantErr: true},
		{in: "loud", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := logging.ParseLevel(tt.in, tt.devel)
			if tt.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), `"`+tt.in+`"`)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNewRejectsBadValues(t *testing.T) {
	t.Parallel()
	_, err := logging.New(logging.Options{Encoder: "xml"})
	assert.ErrorContains(t, err, `"xml"`)
	_, err = logging.New(logging.Options{Level: "chatty"})
	assert.ErrorContains(t, err, `"chatty"`)
}

func TestProductionLogging(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	z, err := logging.New(logging.Options{Output: &out})
	require.NoError(t, err)
	z.Debug("hidden")
	z.Info("reconciled", zap.String("controller", "replicaset"))
	z.Error("failed", zap.Error(errors.New("boom")))

	entries := out.entries(t)
	require.Len(t, entries, 2)
	assert.Equal(t, "info", entries[0]["level"])
	assert.Equal(t, "reconciled", entries[0]["msg"])
	assert.Equal(t, "replicaset", entries[0]["controller"])
	assert.Contains(t, entries[0]["caller"], "logger_test.go")
	_, err = time.Parse(time.RFC3339, entries[0]["ts"].(string))
	require.NoError(t, err, "timestamp is not RFC 3339")
	assert.NotContains(t, entries[0], "stacktrace")
	assert.Equal(t, "boom", entries[1]["error"])
	assert.Contains(t, entries[1], "stacktrace")
}

func TestLevelFilters(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	z, err := logging.New(logging.Options{Level: "error", Output: &out})
	require.NoError(t, err)
	z.Info("hidden")
	z.Error("shown")
	entries := out.entries(t)
	require.Len(t, entries, 1)
	assert.Equal(t, "shown", entries[0]["msg"])
}

func TestDevelLogging(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	z, err := logging.New(logging.Options{Devel: true, Output: &out})
	require.NoError(t, err)
	z.Debug("details")
	z.Warn("careful")
	text := out.String()
	assert.Regexp(t, `DEBUG\t\S+logger_test.go:\d+\tdetails`, text)
	assert.Regexp(t, `WARN\t\S+logger_test.go:\d+\tcareful`, text)
	// Stack traces from warnings up, console encoded (not JSON).
	assert.Contains(t, text, "logging_test.TestDevelLogging")
	assert.False(t, strings.HasPrefix(text, "{"))
	assert.Panics(t, func() { z.DPanic("development panics") })
}

func TestDevelWithExplicitValues(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	z, err := logging.New(logging.Options{Devel: true, Level: "info", Encoder: "json", Output: &out})
	require.NoError(t, err)
	z.Debug("hidden")
	z.Info("shown")
	entries := out.entries(t)
	require.Len(t, entries, 1)
	assert.Equal(t, "shown", entries[0]["msg"])
}

func TestProductionLoggerSamplesAHotLoop(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	z, err := logging.New(logging.Options{Output: &out})
	require.NoError(t, err)
	for range 1000 {
		z.Info("hot")
	}
	z.Info("cold")
	var hot, cold int
	for _, e := range out.entries(t) {
		switch e["msg"] {
		case "hot":
			hot++
		case "cold":
			cold++
		}
	}
	// The first 100 of a message in each second, then every 100th: the
	// loop may straddle one second's boundary, so at most twice that.
	assert.GreaterOrEqual(t, hot, 100)
	assert.LessOrEqual(t, hot, 2*(100+9))
	assert.Equal(t, 1, cold, "another message is counted apart")
}
