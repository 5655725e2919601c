package judge

import (
	"context"
	"io"
)

// WriteBatchRequests writes n Batch API request lines to w, the i-th for
// pair(i) and repeat 0, one at a time (a streaming writer: memory does not
// grow with n). The request encoder of WriteBatchFile and the Batch API's input,
// exported to the tests for the memory benchmark.
func WriteBatchRequests(w io.Writer, n int, pair func(i int) Pair, opt Options) error {
	enc := newRequestEncoder(w, opt, "")
	for i := range n {
		p := pair(i)
		if err := enc.encode(CacheKey(opt.Prompt.Hash, opt.Model, p.Query, p.Document, 0), p); err != nil {
			return err
		}
	}
	return enc.flush()
}

// ParseAnswer is parseAnswer with nothing to redact.
func ParseAnswer(content string) (grade int, reason string, err error) {
	return parseAnswer(content, func(s string) string { return s })
}

// ReadQueriesCapped is ReadQueries with a cap of max bytes instead of
// MaxQueriesBytes.
var ReadQueriesCapped = readQueriesCapped

// OpenCache is OpenCacheContext with a context that does not end.
func OpenCache(path string) (*Cache, error) {
	return OpenCacheContext(context.Background(), path)
}

// Summarize is SummarizeContext with a context that does not end.
func Summarize(res *Result, price *Price) *Summary {
	s, _ := SummarizeContext(context.Background(), res, price)
	return s
}
