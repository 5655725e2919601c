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
