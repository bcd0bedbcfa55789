package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestByteSizeReadsAndSpellsSizesAsGOMEMLIMIT(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		want     uint64
		wantErr  bool
		spelling string
	}{
		{"12MiB", 12 << 20, false, "12MiB"},
		{"512KiB", 512 << 10, false, "512KiB"},
		{"1GiB", 1 << 30, false, "1GiB"},
		{"2TiB", 2 << 40, false, "2TiB"},
		{"1536MiB", 1536 << 20, false, "1536MiB"},
		{"4096B", 4096, false, "4KiB"},
		{"4097", 4097, false, "4097B"},
		{"off", 0, false, "off"},
		{"0", 0, false, "off"},
		{"", 0, true, ""},
		{"MiB", 0, true, ""},
		{"12MB", 0, true, ""},
		{"12 MiB", 0, true, ""},
		{"-1MiB", 0, true, ""},
		{"1.5MiB", 0, true, ""},
		{"16777216TiB", 0, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var b byteSize
			err := b.Set(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, uint64(b))
			assert.Equal(t, tt.spelling, b.String())
		})
	}
}
