package controlplane

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// AssetsEnv names the environment variable that points at a folder holding
// etcd, kube-apiserver, kube-controller-manager and kubectl.
const AssetsEnv = "OPERATOR_TEST_ASSETS"

const modulePath = "github.com/hexagonal-operator/operator"

// Binary returns the absolute path of a control plane binary: from
// OPERATOR_TEST_ASSETS when set (a relative folder is read from the working
// directory), else from the repository's bin/ folder. The error says how to
// get it.
func Binary(name string) (string, error) {
	dir := os.Getenv(AssetsEnv)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", fmt.Errorf("locate %s: %w (set %s or run `make tools`)", name, err, AssetsEnv)
		}
		dir = filepath.Join(root, "bin")
	}
	// Absolute, since each binary runs in its own working folder.
	path, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("locate %s: %w", name, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s not found in %s: run `make tools` to build the test control plane binaries (or set %s)", name, dir, AssetsEnv)
	}
	return path, nil
}

// RepoRoot walks up from the working directory to the folder whose go.mod
// declares this module; go test runs each package in its own folder.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of " + modulePath + " above the working directory")
		}
		dir = parent
	}
}

func isModuleRoot(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(rest) == modulePath
		}
	}
	return false
}
