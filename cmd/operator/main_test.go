package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGCTargetIsTheOperatorsUnlessGOGCIsSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		gogc    string
		want    int
		wantSet bool
	}{
		{"unset", "", defaultGCPercent, true},
		{"set by the user", "100", 0, false},
		{"collection off", "off", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := gcTarget(func(key string) string {
				if key == "GOGC" {
					return tt.gogc
				}
				return ""
			})
			assert.Equal(t, tt.wantSet, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestHeapFloorIsTheOperatorsUnlessTheEnvironmentSetsOne(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     string
		want    uint64
		wantErr string
	}{
		{"unset", "", 12 << 20, ""},
		{"set", "32MiB", 32 << 20, ""},
		{"off", "off", 0, ""},
		{"bad", "12MB", 0, `OPERATOR_HEAP_FLOOR: size "12MB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := heapFloor(func(key string) string {
				if key == heapFloorEnv {
					return tt.env
				}
				return ""
			})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
