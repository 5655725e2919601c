package compare_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// refClusters reads a clusters file apart from ReadClusters: lines split at
// '\n' (a '\r' before it cut), a BOM cut from the first, each trimmed of
// Unicode white space; blank lines and lines starting with # skipped; every
// other line two fields between runs of white space (split by hand), a query
// once. bad is the line of the first fault (0: none).
func refClusters(b []byte) (out map[string]string, bad int) {
	out = map[string]string{}
	text := strings.TrimSuffix(string(b), "\n") // the last line's end is no line
	if len(b) == 0 {
		return out, 0
	}
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if i == 0 {
			l = strings.TrimPrefix(l, "\uFEFF")
		}
		l = strings.TrimFunc(l, unicode.IsSpace)
		if l == "" || l[0] == '#' {
			continue
		}
		var fields []string
		start := -1
		for j, r := range l + " " {
			switch {
			case unicode.IsSpace(r) && start >= 0:
				fields, start = append(fields, l[start:j]), -1
			case !unicode.IsSpace(r) && start < 0:
				start = j
			}
		}
		if l[0] == '{' || len(fields) != 2 {
			return nil, i + 1
		}
		if _, dup := out[fields[0]]; dup {
			return nil, i + 1
		}
		out[fields[0]] = fields[1]
	}
	return out, 0
}

// FuzzReadClusters holds ReadClusters (compare --clusters) to refClusters, a
// reader written apart from it: an accepted file is one refClusters accepts,
// with the same query-to-cluster map; a refused one is an *input.Error
// "f.txt:N: ..." at the line refClusters finds first at fault.
func FuzzReadClusters(f *testing.F) {
	for _, s := range []string{
		"q1 c1\nq2\tc1\r\n\n# a comment\nq3 c2",
		"\uFEFFq1 c1\n",
		"\uFEFF # a comment after a BOM and a blank\nq1 c1\n",
		"q1 c1\nq1 c2\n",
		"q1\n",
		"q1 c1 extra\n",
		`{"id":"q1","cluster":"c"}` + "\n",
		"q1\u00a0c1\n\u2028q2 c2\u3000\n",
		"q1 c1\n\n\n#\n q2  c2 \n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := compare.ReadClusters(context.Background(), bytes.NewReader(b), "f.txt")
		want, bad := refClusters(b)
		if bad == 0 {
			require.NoError(t, err, "refused %q", b)
			require.Equal(t, want, got)
			return
		}
		var ie *input.Error
		require.ErrorAs(t, err, &ie, "accepted %q (line %d is at fault)", b, bad)
		require.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("f.txt:%d: ", bad)), "%q: %v, want line %d", b, err, bad)
	})
}

// A BOM then white space then # is a comment on line 1, as on any other line:
// the BOM was cut after the trim, so the comment was read as fields.
func TestReadClustersBOMThenComment(t *testing.T) {
	got, err := compare.ReadClusters(context.Background(), strings.NewReader("\uFEFF # clusters\nq1 c1\n"), "f.txt")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"q1": "c1"}, got)
}
