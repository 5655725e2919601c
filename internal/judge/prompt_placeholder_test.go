package judge_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// A --prompt template's placeholder that the judge does not know was sent to
// the model as it was written ({{documents}}, {{ query }}, a misspelt
// {{answer_format}}, which also left the answer format unsaid where it meant
// to place it): it is refused at its line.
func TestParsePromptRefusesAnUnknownPlaceholder(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Query: {{query}}\nDocument: {{document}}\n{{answer_fromat}}\n", `p.txt:3: unknown placeholder "{{answer_fromat}}"`},
		{"Query: {{ query }}\n{{query}} {{document}}\n", `p.txt:1: unknown placeholder "{{ query }}"`},
		{"{{query}}\n\n{{document}} and {{documents}}", `p.txt:3: unknown placeholder "{{documents}}"`},
	} {
		_, err := judge.ParsePrompt("p.txt", []byte(tc.text))
		var ie *input.Error
		require.ErrorAs(t, err, &ie, tc.text)
		assert.Contains(t, err.Error(), tc.want)
	}
	for _, ok := range []string{
		"{{query}} {{document}} {{answer_format}}",
		"{{query}}\n{{document}}\nAnswer in JSON: {\"score\": {\"a\": 1}}", // braces that are not a placeholder
		judge.DefaultPrompt().Template,
	} {
		_, err := judge.ParsePrompt("p.txt", []byte(ok))
		require.NoError(t, err, ok)
	}
}
