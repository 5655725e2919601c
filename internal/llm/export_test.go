package llm

import (
	"context"
	"net/http"
	"net/url"
)

// CancelBatch asks the server to cancel a batch (it goes through cancelling
// to cancelled). Tests only: an interrupted run never cancels its batch (it
// is paid for), it collects it on the next run.
func (c *BatchClient) CancelBatch(ctx context.Context, id string) (*Batch, error) {
	var b Batch
	if err := c.do(ctx, http.MethodPost, "/batches/"+url.PathEscape(id)+"/cancel", []byte("{}"), &b); err != nil {
		return nil, err
	}
	return &b, nil
}
