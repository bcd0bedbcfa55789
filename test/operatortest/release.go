package operatortest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Release is one release CHANGELOG.md records: its version, date and the
// commit it was cut at.
type Release struct {
	Version, Date, Commit string
}

var (
	releaseHeading = regexp.MustCompile(`^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$`)
	releaseLink    = regexp.MustCompile(`^\[(\d+\.\d+\.\d+)\]: \S+/tree/([0-9a-f]{40})$`)
)

// Releases reads the repository at root: the version under way (VERSION)
// and the releases of CHANGELOG.md, newest first, each with the commit its
// link names.
func Releases(root string) (current string, releases []Release, err error) {
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return "", nil, err
	}
	current = strings.TrimSpace(string(v))
	f, err := os.Open(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = f.Close() }()
	commits := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if m := releaseHeading.FindStringSubmatch(line); m != nil {
			releases = append(releases, Release{Version: m[1], Date: m[2]})
		}
		if m := releaseLink.FindStringSubmatch(line); m != nil {
			commits[m[1]] = m[2]
		}
	}
	if err := s.Err(); err != nil {
		return "", nil, err
	}
	var errs []error
	for i := range releases {
		c, ok := commits[releases[i].Version]
		if !ok {
			errs = append(errs, fmt.Errorf("CHANGELOG.md: release %s has no link to the commit it was cut at", releases[i].Version))
		}
		releases[i].Commit = c
	}
	return current, releases, errors.Join(errs...)
}
