package baseline

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// FuzzAddChurnLines: the --min-rbo and --max-churn grammar ([GROUP=]F per
// line, and the multi-line Action inputs). An accepted value gives one gate
// per line that is neither blank nor a # comment (counted apart from the
// parser), each on the flag's measure with F in [0, 1], on overall, type:NAME
// or locale:TAG, no group twice; a line without '=' is the overall gate at F
// as strconv reads it; and the gates written back as the flag writes them
// (QuoteGroup(GROUP)=F, one a line) read back as the same gates.
func FuzzAddChurnLines(f *testing.F) {
	for i, s := range []string{
		"0.8", "0.8\ntype:faq=0.7\nlocale:pt-BR=0.6\n# a comment\n\n", "overall=1", `type:"a=b"=0.5`, `type:"a\x23b"=0.5`,
		"locale:PT_br=0.5", "1.5", "type:faq=0.5\ntype:faq=0.6", "NaN", "-0", "type:=0.5", "0x1p-1", "type: faq =0.5", "locale:=1",
	} {
		f.Add(i%2 == 0, s)
	}
	f.Fuzz(func(t *testing.T, rbo bool, v string) {
		key := KeyChurn
		if rbo {
			key = KeyRBO
		}
		var l floor.List
		if err := AddChurnLines(&l, key, v); err != nil {
			return
		}
		var lines []string
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
				lines = append(lines, line)
			}
		}
		require.Len(t, l, len(lines), "%q", v)
		groups := map[string]bool{}
		var back []string
		for i, s := range l {
			require.Equal(t, key, s.Measure)
			require.True(t, s.Value >= 0 && s.Value <= 1, "%q: %v out of [0,1]", v, s.Value)
			require.True(t, s.Group == outcome.GroupOverall || strings.HasPrefix(s.Group, floor.TypePrefix) && len(s.Group) > len(floor.TypePrefix) ||
				strings.HasPrefix(s.Group, floor.LocalePrefix) && len(s.Group) > len(floor.LocalePrefix), "%q: group %q", v, s.Group)
			require.False(t, groups[s.Group], "%q: two gates on %q", v, s.Group)
			groups[s.Group] = true
			if !strings.Contains(lines[i], "=") {
				want, err := strconv.ParseFloat(lines[i], 64)
				require.NoError(t, err, "%q accepted as F", lines[i])
				require.Equal(t, outcome.GroupOverall, s.Group)
				require.False(t, math.IsNaN(want))
				require.Equal(t, want, s.Value)
			}
			back = append(back, floor.QuoteGroup(s.Group)+"="+format.Full(s.Value))
		}
		var again floor.List
		require.NoError(t, AddChurnLines(&again, key, strings.Join(back, "\n")), "%q written back as %q", v, back)
		require.Equal(t, l, again)
	})
}
