package generate_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// TestRunWritesIntoItsWriter: generate.Run writes the cases into the writer it
// is given (the output named by a path that does not exist: nothing is
// opened) with the prompt it is given, and refuses a mode whose service is
// missing.
func TestRunWritesIntoItsWriter(t *testing.T) {
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	var out bytes.Buffer
	o, in := genOptions(t, &out)
	o.KB, o.Out, o.LLM.URL = "missing/kb", "missing/cases.jsonl", srv.URL
	require.NoError(t, o.Validate())
	_, err := generate.Run(context.Background(), in, *o)
	require.ErrorContains(t, err, "no server, batch, file or output")

	c, err := llm.New(llm.Config{URL: srv.URL, Model: "fake"})
	require.NoError(t, err)
	in.Client = c
	in.Prompt, err = generate.ParsePrompt("missing/mine.txt", []byte(generate.DefaultPrompt().Template))
	require.NoError(t, err)
	res, err := generate.Run(context.Background(), in, *o)
	require.NoError(t, err)
	require.Positive(t, res.Written)
	assert.Equal(t, res.Written, strings.Count(out.String(), "\n"))
	assert.Contains(t, out.String(), `"file:mine.txt"`, "the prompt given is the one recorded")
}
