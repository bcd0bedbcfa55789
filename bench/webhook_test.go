package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every review's verdict is compared with the one expected of it, and the
// first that differs is named, whichever way it differs; counting denials
// alone would pass two reviews swapped.
func TestCheckVerdictsNamesTheFirstWrongReview(t *testing.T) {
	t.Parallel()
	expected := func(n int) []bool {
		out := make([]bool, n)
		for i := range out {
			out[i] = validateDenies(i)
		}
		return out
	}
	swapped := expected(30)
	swapped[9], swapped[10] = false, true // as many denials, the wrong ones
	tests := []struct {
		name    string
		who     string
		denied  []bool
		want    func(int) bool
		wantErr string
	}{
		{name: "every 10th denied", who: "operator", denied: expected(30), want: validateDenies},
		{name: "no review", who: "operator", want: validateDenies},
		{name: "a denial swapped for another", who: "operator", denied: swapped, want: validateDenies, wantErr: "operator: review bench-000009 (9 of 30) allowed, want it denied"},
		{name: "the echo allows all", who: "echo", denied: make([]bool, 30), want: allowAll},
		{name: "the echo denies one", who: "echo", denied: []bool{false, false, true}, want: allowAll, wantErr: "echo: review bench-000002 (2 of 3) denied, want it allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			err := checkVerdicts(tt.who, tt.denied, tt.want)

			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.wantErr)
		})
	}
}

// deniedCount counts the denials among the verdicts, for the figure.
func TestReviewStatsDeniedCount(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 2, reviewStats{denied: []bool{true, false, false, true}}.deniedCount())
	assert.Zero(t, reviewStats{}.deniedCount())
}
