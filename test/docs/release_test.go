package docs_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/test/operatortest"
)

// semver is a release version: no pre-release, no build.
var semver = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`)

// less orders two versions semver matches.
func less(t *testing.T, a, b string) bool {
	t.Helper()
	pa, pb := semver.FindStringSubmatch(a), semver.FindStringSubmatch(b)
	require.NotNil(t, pa, a)
	require.NotNil(t, pb, b)
	for i := 1; i <= 3; i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return false
}

// The changelog is in Keep a Changelog's form, its releases newest first,
// each cut at a commit of this repository's history, and VERSION is the
// release under way, after the last one.
func TestReleasesAreRecorded(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	current, releases, err := operatortest.Releases(root)
	require.NoError(t, err)
	require.Regexp(t, semver, current, "VERSION")
	require.NotEmpty(t, releases, "CHANGELOG.md records a release")
	for i, r := range releases {
		if i > 0 {
			assert.True(t, less(t, r.Version, releases[i-1].Version), "%s is listed after %s: newest first", r.Version, releases[i-1].Version)
			assert.LessOrEqual(t, r.Date, releases[i-1].Date, "%s's date", r.Version)
		}
		cmd := exec.Command("git", "cat-file", "-e", r.Commit+"^{commit}")
		cmd.Dir = root
		assert.NoError(t, cmd.Run(), "release %s: commit %s is not in this repository's history", r.Version, r.Commit)
	}
	assert.True(t, less(t, releases[0].Version, current), "VERSION %s must come after the last release %s", current, releases[0].Version)

	changelog := readDoc(t, "CHANGELOG.md")
	assert.True(t, strings.HasPrefix(changelog, "# Changelog\n"))
	assert.Contains(t, changelog, "\n## [Unreleased]\n")
	assert.Contains(t, changelog, "\n[Unreleased]: ")
	sections := regexp.MustCompile(`(?m)^### (.*)$`).FindAllStringSubmatch(changelog, -1)
	require.NotEmpty(t, sections)
	for _, s := range sections {
		assert.Contains(t, []string{"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, s[1], "Keep a Changelog's sections only")
	}
}

// The binary is stamped with VERSION: `make build` links it in.
func TestBuildIsStampedWithVersion(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	current, _, err := operatortest.Releases(root)
	require.NoError(t, err)
	cmd := exec.Command("make", "-n", "build")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "internal/version.Version="+current+`"`)
}
