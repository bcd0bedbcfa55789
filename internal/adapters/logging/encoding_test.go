package logging_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/hexagonal-operator/operator/internal/adapters/logging"
)

func TestParseStacktraceLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		devel   bool
		want    zapcore.Level
		wantErr bool
	}{
		{in: "", want: zapcore.ErrorLevel},
		{in: "", devel: true, want: zapcore.WarnLevel},
		{in: "debug", want: zapcore.DebugLevel},
		{in: "info", want: zapcore.InfoLevel},
		{in: "warn", want: zapcore.WarnLevel},
		{in: "ERROR", devel: true, want: zapcore.ErrorLevel},
		{in: "panic", want: zapcore.PanicLevel},
		{in: "3", wantErr: true},
		{in: "loud", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := logging.ParseStacktraceLevel(tt.in, tt.devel)
			if tt.wantErr {
				assert.ErrorContains(t, err, tt.in)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// Each --zap-time-encoding value writes the JSON "ts" as
// controller-runtime's does: a number for the epoch encodings, a string
// otherwise.
func TestTimeEncodings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		check func(t *testing.T, ts any)
	}{
		{"", rfc3339(time.RFC3339)},
		{"rfc3339", rfc3339(time.RFC3339)},
		{"rfc3339nano", rfc3339(time.RFC3339Nano)},
		{"iso8601", func(t *testing.T, ts any) {
			s, ok := ts.(string)
			require.True(t, ok, "%T", ts)
			_, err := time.Parse("2006-01-02T15:04:05.000Z0700", s)
			assert.NoError(t, err)
		}},
		{"epoch", epoch(time.Second)},
		{"millis", epoch(time.Millisecond)},
		{"nano", epoch(time.Nanosecond)},
		{"nanos", epoch(time.Nanosecond)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var out syncBuffer
			z, err := logging.New(logging.Options{TimeEncoding: tt.in, Output: &out})
			require.NoError(t, err)
			z.Info("tick")
			entries := out.entries(t)
			require.Len(t, entries, 1)
			tt.check(t, entries[0]["ts"])
		})
	}
}

func rfc3339(layout string) func(t *testing.T, ts any) {
	return func(t *testing.T, ts any) {
		s, ok := ts.(string)
		require.True(t, ok, "%T", ts)
		got, err := time.Parse(layout, s)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now(), got, time.Minute)
	}
}

// epoch checks a numeric timestamp in units of unit since 1970.
func epoch(unit time.Duration) func(t *testing.T, ts any) {
	return func(t *testing.T, ts any) {
		n, ok := ts.(float64)
		require.True(t, ok, "%T", ts)
		got := time.Unix(0, int64(n*float64(unit)))
		assert.WithinDuration(t, time.Now(), got, time.Minute)
	}
}

func TestTimeEncodingAppliesToTheConsoleToo(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	z, err := logging.New(logging.Options{Devel: true, TimeEncoding: "epoch", Output: &out})
	require.NoError(t, err)
	z.Info("tick")
	first, _, _ := strings.Cut(out.String(), "\t")
	assert.Regexp(t, `^\d+\.\d+(e\+\d+)?$`, first)
}

func TestStacktraceLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opts  logging.Options
		stack map[string]bool // by message
	}{
		{"production: errors", logging.Options{}, map[string]bool{"i": false, "w": false, "e": true}},
		{"info and up", logging.Options{StacktraceLevel: "info"}, map[string]bool{"i": true, "w": true, "e": true}},
		{"panic only", logging.Options{StacktraceLevel: "panic"}, map[string]bool{"i": false, "w": false, "e": false}},
		{"devel: warnings", logging.Options{Devel: true, Encoder: "json"}, map[string]bool{"i": false, "w": true, "e": true}},
		{"devel, explicit", logging.Options{Devel: true, Encoder: "json", StacktraceLevel: "error"}, map[string]bool{"i": false, "w": false, "e": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out syncBuffer
			tt.opts.Output = &out
			z, err := logging.New(tt.opts)
			require.NoError(t, err)
			z.Info("i")
			z.Warn("w")
			z.Error("e", zap.Error(errors.New("boom")))
			entries := out.entries(t)
			require.Len(t, entries, 3)
			for _, e := range entries {
				msg := e["msg"].(string)
				assert.Equal(t, tt.stack[msg], e["stacktrace"] != nil, "stack trace on %q", msg)
			}
		})
	}
}

func TestNewRejectsBadStacktraceLevelAndTimeEncoding(t *testing.T) {
	t.Parallel()
	_, err := logging.New(logging.Options{StacktraceLevel: "verbose"})
	assert.ErrorContains(t, err, `"verbose"`)
	_, err = logging.New(logging.Options{TimeEncoding: "unix"})
	assert.ErrorContains(t, err, `"unix"`)
}
