package publish

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/guard"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
)

// The job summary is guarded like the streams: an input error's message and file
// name are shown verbatim in a code span and a code block, where Markdown escapes
// nothing, and a report may carry data in code; a later step that shows the
// summary in the log (cat "$GITHUB_STEP_SUMMARY") must not run a forged command.
func TestSummaryGuarded(t *testing.T) {
	payloads := []string{"##[stop-commands]FORGED", "x #\u00ad#[error title=FORGED]y", "\u00a0::error title=FORGED::x", "\u200b::add-mask::FORGED"}
	for _, f := range payloads {
		t.Run(fmt.Sprintf("%q", f), func(t *testing.T) {
			r := newRunner(t, nil, "push", `{}`)
			file := filepath.Join(r.workspace, "in "+strings.TrimLeftFunc(f, unicode.IsSpace)+".jsonl")
			require.True(t, r.publisher().Fail(Failure{Command: "check", Message: file + ":3: unknown id " + strconv.Quote(f), File: file, Line: 3}))
			pub := pubFor("default", "```text\n"+f+"\n```\n\n`"+f+"`")
			pub.Render = func(int) string { return pub.Markdown }
			r.publish(pub)
			sum := r.read(t, r.summary)
			require.Contains(t, sum, "FORGED")
			assert.Empty(t, runnertest.Commands(sum, nil), "%s", sum)
		})
	}
	// Text with no command in it is left as it was.
	for _, s := range []string{"", "# title\n\n| a | b |\n", "a::b ## [x] #[y]\n", "\\::x"} {
		assert.Equal(t, s, guard.Text(s))
	}
	assert.Equal(t, "##\\[x]\n\\::error::y", guard.Text("##[x]\n::error::y"))
}
