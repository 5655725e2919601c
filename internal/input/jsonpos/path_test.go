package jsonpos

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A value's path and its type as the messages that refuse a value name them
// (report --from's document checks and the history reader share them).
func TestPathAndShown(t *testing.T) {
	for _, tc := range []struct{ parent, key, want string }{
		{"", "overall", "overall"},
		{"by_locale", "pt-BR", "by_locale.pt-BR"},
		{"strategies", "dense+rerank", "strategies.dense+rerank"},
		{"strategies", "my run", `strategies."my run"`},
		{"x", "a\nb", `x."a\nb"`},
		{"x", "", `x.""`},
	} {
		assert.Equal(t, tc.want, Path(tc.parent, tc.key), tc.key)
	}
	assert.Equal(t, "x.ci95[1]", Index("x.ci95", 1))
	for _, tc := range []struct {
		kind   Kind
		b      bool
		number string
		want   string
	}{
		{String, false, "", "a string"},
		{Null, false, "", "null"},
		{Bool, true, "", "true"},
		{Bool, false, "", "false"},
		{Array, false, "", "array"},
		{Object, false, "", "object"},
		{Number, false, "0.5", "0.5"},
		{Number, false, "1" + strings.Repeat("0", 50), "1" + strings.Repeat("0", 39) + "…"},
	} {
		assert.Equal(t, tc.want, Shown(tc.kind, tc.b, []byte(tc.number)))
	}
}
