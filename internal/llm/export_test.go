package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
)

// CancelBatch asks the server to cancel a batch (it goes through cancelling
// to cancelled). Tests only: an interrupted run never cancels its batch (it
// is paid for), it collects it on the next run.
func (c *BatchClient) CancelBatch(ctx context.Context, id string) (*Batch, error) {
	var b Batch
	if err := c.do(ctx, c.Policy, http.MethodPost, "/batches/"+url.PathEscape(id)+"/cancel", []byte("{}"), &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// GeminiInlinedToJSONL is geminiInlined with the errors of reading and
// writing unwrapped: the tests' way to the inline responses' reader.
func GeminiInlinedToJSONL(r io.Reader, w func() (io.Writer, error)) error {
	err := geminiInlined(r, w)
	var re *readError
	if errors.As(err, &re) {
		return re.err
	}
	var we *writeError
	if errors.As(err, &we) {
		return we.err
	}
	return err
}
