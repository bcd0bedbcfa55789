package helm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMain fails the package when any child process (helm, kubectl, etcd,
// kube-apiserver) outlives the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if left := children(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "processes left running after the tests: %s\n", strings.Join(left, ", "))
		code = 1
	}
	os.Exit(code)
}

// children lists the live child processes of this test binary.
func children() []string {
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
