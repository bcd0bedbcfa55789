package controlplane

import (
	"slices"
	"testing"
)

func TestExtraFlagsReplaceDefaultsOfTheSameName(t *testing.T) {
	got := overrideFlags(
		[]string{"--authorization-mode=RBAC", "--disable-admission-plugins=ServiceAccount", "--v=0"},
		[]string{"--disable-admission-plugins=", "--watch-cache=false"},
	)
	want := []string{"--authorization-mode=RBAC", "--v=0", "--disable-admission-plugins=", "--watch-cache=false"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
