package operatorproc

import "strings"

// raceMarker starts every report of the race detector.
const raceMarker = "WARNING: DATA RACE"

// raceSeparator is the line the race detector puts before and after each
// report.
const raceSeparator = "=================="

// raceReports returns the race detector's reports found in output, each
// from its marker to its closing separator, or "" when there is none. The
// reports are cut out because the process's own log lines around them
// would bury them.
func raceReports(output string) string {
	if !strings.Contains(output, raceMarker) {
		return ""
	}
	var b strings.Builder
	in := false
	for line := range strings.Lines(output) {
		trimmed := strings.TrimRight(line, "\r\n")
		switch {
		case trimmed == raceMarker:
			in = true
			b.WriteString(raceSeparator + "\n")
		case in && trimmed == raceSeparator:
			in = false
			b.WriteString(trimmed + "\n")
			continue
		}
		if in {
			b.WriteString(line)
		}
	}
	if in {
		// The process ended in the middle of a report.
		b.WriteString("(report cut short)\n")
	}
	return b.String()
}
