package operatorproc

import (
	"cmp"
	"debug/buildinfo"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/test/controlplane"
)

func TestRaceReports(t *testing.T) {
	t.Parallel()
	report := "==================\n" +
		"WARNING: DATA RACE\n" +
		"Write at 0x00c000012345 by goroutine 7:\n" +
		"  main.main.func1()\n" +
		"      /tmp/racy/main.go:9 +0x44\n" +
		"\n" +
		"Previous write at 0x00c000012345 by main goroutine:\n" +
		"  main.main()\n" +
		"      /tmp/racy/main.go:11 +0x8c\n" +
		"==================\n"
	for _, tc := range []struct {
		name, output, want string
	}{
		{name: "none", output: `{"level":"info","msg":"starting"}` + "\n", want: ""},
		{
			name:   "between log lines",
			output: `{"level":"info","msg":"starting"}` + "\n" + report + `{"level":"info","msg":"stopped"}` + "\nFound 1 data race(s)\n",
			want:   report,
		},
		{name: "two", output: report + "log\n" + report, want: report + report},
		{
			name:   "cut short",
			output: "==================\nWARNING: DATA RACE\nRead at 0x1 by goroutine 3:\n",
			want:   "==================\nWARNING: DATA RACE\nRead at 0x1 by goroutine 3:\n(report cut short)\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, raceReports(tc.output))
		})
	}
}

func TestBuildFlags(t *testing.T) {
	t.Parallel()
	env, flags := buildFlags(true)
	assert.Equal(t, []string{"CGO_ENABLED=1"}, env, "the race detector needs cgo")
	assert.Contains(t, flags, "-race")

	env, flags = buildFlags(false)
	assert.Equal(t, []string{"CGO_ENABLED=0"}, env, "static, as make build")
	assert.NotContains(t, flags, "-race")
	assert.Contains(t, flags, "-trimpath")
}

// The binary Build makes carries -race exactly when this test binary does,
// and BuildRelease's never does.
func TestBuildFollowsTheRaceDetector(t *testing.T) {
	t.Parallel()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	dir := t.TempDir()
	for _, tc := range []struct {
		build func(string, string) (string, error)
		race  bool
	}{
		{Build, raceEnabled},
		{BuildRelease, false},
	} {
		bin, err := tc.build(root, dir)
		require.NoError(t, err)
		info, err := buildinfo.ReadFile(bin)
		require.NoError(t, err)
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		assert.Equal(t, strconv.FormatBool(tc.race), cmp.Or(settings["-race"], "false"), "%s: -race", bin)
		assert.Equal(t, map[bool]string{true: "1", false: "0"}[tc.race], settings["CGO_ENABLED"], "%s: CGO_ENABLED", bin)
	}
}
