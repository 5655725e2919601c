package guard

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkJSON holds JSON to its promise on the line {"id": s, "list": [s]}
// (as json.Marshal writes it): the escaped line is valid JSON that decodes to
// the line's strings, and the guard passes it unchanged.
func checkJSON(t *testing.T, s string) []byte {
	t.Helper()
	line, err := json.Marshal(struct {
		ID   string   `json:"id"`
		List []string `json:"list"`
	}{s, []string{s, "##[x"}})
	require.NoError(t, err)
	line = append(line, '\n')
	got := JSON(line)
	type value struct {
		ID   string   `json:"id"`
		List []string `json:"list"`
	}
	var want, back value // want: the line's own strings (invalid UTF-8 made U+FFFD by Marshal)
	require.NoError(t, json.Unmarshal(line, &want))
	require.NoError(t, json.Unmarshal(got, &back), "%q", got)
	assert.Equal(t, want, back)
	assert.Equal(t, []string{want.ID, "##[x"}, back.List)
	assert.Equal(t, string(got), Text(string(got)), "the guard changes %q", got)
	return got
}

// TestJSON: the data of a JSON line that the guard would otherwise change
// (making the JSON invalid: "##\[" is no JSON escape) is escaped in JSON's
// own way instead.
func TestJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", `{"id":"plain","list":["plain","##\u005bx"]}` + "\n"},
		{"q##[x]y", `{"id":"q##\u005bx]y","list":["q##\u005bx]y","##\u005bx"]}` + "\n"},
		{"###[", `{"id":"###\u005b","list":["###\u005b","##\u005bx"]}` + "\n"},
		{"#[ #x[", `{"id":"#[ #x[","list":["#[ #x[","##\u005bx"]}` + "\n"},
		{"#\u200b#[", `{"id":"#\u200b#[","list":["#\u200b#[","##\u005bx"]}` + "\n"}, // no "##[" once the ignorable is escaped
		{"a\u00adb\u007f", `{"id":"a\u00adb\u007f","list":["a\u00adb\u007f","##\u005bx"]}` + "\n"},
		{"tag \U000E0041", `{"id":"tag \udb40\udc41","list":["tag \udb40\udc41","##\u005bx"]}` + "\n"},
		{"\\##[", `{"id":"\\##\u005b","list":["\\##\u005b","##\u005bx"]}` + "\n"},
		{"::error::x", `{"id":"::error::x","list":["::error::x","##\u005bx"]}` + "\n"},
	} {
		assert.Equal(t, tc.want, string(checkJSON(t, tc.in)), "%q", tc.in)
	}
	// Nothing to escape: the very slice.
	b := []byte(`{"id":"a"}` + "\n")
	assert.Same(t, &b[0], &JSON(b)[0])
	// A run of ignorables past what the guard holds back (maxPending) after
	// "##" is escaped too, so no backslash lands inside a string.
	long := "##"
	for range maxPending {
		long += "\u200b"
	}
	checkJSON(t, long+"[")
}

// FuzzJSON: any string, as a JSON line's strings, comes out of JSON valid,
// the same once decoded, and unchanged by the guard.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{"", "q##[x]y", "#\u200b#[", "##\u00ad\ufe0f[", "\U000E0001", "\x7f##[", "\\##[", "\"##[\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkJSON(t, s)
	})
}
