package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBinaryEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		environ []string
		rate    int
		want    []string
	}{
		{"the default leaves the environment", []string{"A=1", "GODEBUG=x=1"}, 0, []string{"A=1", "GODEBUG=x=1"}},
		{"a rate without GODEBUG", []string{"A=1"}, 4096, []string{"A=1", "GODEBUG=memprofilerate=4096"}},
		{"a rate after the settings already there", []string{"GODEBUG=x=1", "A=1"}, 1, []string{"A=1", "GODEBUG=x=1,memprofilerate=1"}},
		{"an empty GODEBUG", []string{"GODEBUG=", "A=1"}, 512, []string{"A=1", "GODEBUG=memprofilerate=512"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, binaryEnv(tt.environ, tt.rate))
		})
	}
}

func TestParseResidentSet(t *testing.T) {
	t.Parallel()
	const status = "Name:\toperator\nVmRSS:\t   52412 kB\nRssAnon:\t   30000 kB\nRssFile:\t   22412 kB\nRssShmem:\t       0 kB\n"
	tests := []struct {
		name    string
		status  string
		want    residentSet
		wantErr string
	}{
		{"all three", status, residentSet{total: 52412 << 10, anon: 30000 << 10, file: 22412 << 10}, ""},
		{"one missing", "VmRSS:\t1 kB\nRssAnon:\t1 kB\n", residentSet{}, "RssFile"},
		{"another unit", "VmRSS:\t1 MB\nRssAnon:\t1 kB\nRssFile:\t1 kB\n", residentSet{}, "unexpected VmRSS line"},
		{"not a number", "VmRSS:\tx kB\nRssAnon:\t1 kB\nRssFile:\t1 kB\n", residentSet{}, "VmRSS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseResidentSet(strings.NewReader(tt.status))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// The figures read from this process's own status hold together.
func TestResidentSetOfThisProcess(t *testing.T) {
	t.Parallel()
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	rs, err := parseResidentSet(f)
	require.NoError(t, err)
	assert.Positive(t, rs.anon)
	assert.Positive(t, rs.file)
	assert.LessOrEqual(t, rs.anon+rs.file, rs.total)
}
