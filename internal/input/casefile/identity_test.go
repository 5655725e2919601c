package casefile

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParentFromID(t *testing.T) {
	for _, tt := range []struct{ id, sep, want string }{
		{"card-12#chunk-3", "#", "card-12"},
		{"a#b#chunk-3", "#", "a#b"},
		{"card-12", "#", "card-12"},
		{"#chunk-1", "#", "#chunk-1"},
		{"card-12::c3", "::", "card-12"},
		{"card-12#chunk-3", "", "card-12#chunk-3"},
	} {
		assert.Equal(t, tt.want, ParentFromID(tt.id, tt.sep), "%q %q", tt.id, tt.sep)
	}
	re := regexp.MustCompile(`^(.+)-chunk-\d+$`)
	assert.Equal(t, "card-12", ParentFromIDRegexp("card-12-chunk-3", re))
	assert.Equal(t, "card-12", ParentFromIDRegexp("card-12", re))
	assert.Equal(t, "card", ParentFromIDRegexp("card-12", regexp.MustCompile(`^[a-z]+`)))
}

func TestTopKIdentities(t *testing.T) {
	tests := []struct {
		name   string
		ranked []string
		k      int
		want   []string
	}{
		{"empty retrieved", nil, 5, []string{}},
		{"k larger than list", []string{"a", "b"}, 5, []string{"a", "b"}},
		{"k=1", []string{"a", "b"}, 1, []string{"a"}},
		{"k=0 gives none", []string{"a"}, 0, []string{}},
		{"duplicates of one parent count once, at first rank", []string{"a", "a", "a", "b", "c"}, 2, []string{"a", "b"}},
		{"dedup happens before the cut", []string{"a", "a", "a", "a", "a", "g"}, 2, []string{"a", "g"}},
		{"empty identity skipped", []string{"", "a"}, 1, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TopKIdentities([]string{}, tt.ranked, tt.k)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTopKIdentitiesAppendsAfterDst(t *testing.T) {
	got := TopKIdentities([]string{"x"}, []string{"x", "y", "z"}, 2)
	assert.Equal(t, []string{"x", "x", "y"}, got, "dedup and cut apply only to the appended part")
}
