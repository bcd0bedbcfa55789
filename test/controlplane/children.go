package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Children lists the live child processes of this process, as "pid
// (name)": a test binary's TestMain fails the run when any outlives its
// tests, so that no test leaves an etcd, a kube-apiserver or an operator
// behind.
func Children() []string {
	self := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(data)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) > 1 && fields[1] == self && fields[0] != "Z" {
			out = append(out, s[:end+1])
		}
	}
	return out
}

// WithoutChildren is a test binary's exit code after its tests ended with
// code: 1, with the leftovers named on stderr, when a child process
// outlives them.
func WithoutChildren(code int) int {
	if left := Children(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "processes left running after the tests: %s\n", strings.Join(left, ", "))
		return 1
	}
	return code
}
