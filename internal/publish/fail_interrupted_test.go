package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run stopped inside Actions is an ::error:: annotation and a job-summary
// entry. One that SIGINT or SIGTERM stopped (GitHub cancelling the job) was
// titled an "input error" and told the reader to "fix the input above", and,
// when the signal came while it published, that it stopped "before writing
// any report" after it had written them. It is titled "interrupted" and says
// to run again; an input error keeps its words.
func TestFailInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name        string
		failure     Failure
		title, next string
	}{
		{"input error", Failure{Command: "check", Message: "cases.jsonl:3: bad line"},
			"retrieval-gate check%3A input error", "The run stopped with exit code 2 before writing any report; fix the input above and run again."},
		{"interrupted", Failure{Command: "check", Message: "check: interrupted: failed to read cases: context canceled", Interrupted: true},
			"retrieval-gate check%3A interrupted", "The run was interrupted (SIGINT or SIGTERM: a cancelled job) and stopped with exit code 2; run it again."},
		{"interrupted after its files", Failure{Command: "compare", Message: "compare: interrupted after its files were written: context canceled", Interrupted: true},
			"retrieval-gate compare%3A interrupted", "The run was interrupted (SIGINT or SIGTERM: a cancelled job) and stopped with exit code 2; run it again."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, nil, "push", `{}`)
			require.True(t, r.publisher().Fail(tc.failure))
			assert.Contains(t, r.stdout.String(), "::error title="+tc.title+"::")
			sum := r.read(t, r.summary)
			assert.Contains(t, sum, tc.next)
			if tc.failure.Interrupted {
				assert.NotContains(t, sum, "input")
				assert.NotContains(t, sum, "before writing any report")
			}
		})
	}
}
