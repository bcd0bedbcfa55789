package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
