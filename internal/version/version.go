package version

import "runtime/debug"

// Version is the release or `git describe` of the build; "dev" when
// unstamped.
var Version = "dev"

// String is what `operator --version` prints.
func String() string {
	rev := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	return "hexagonal-operator " + Version + " (revision " + rev + ")"
}
