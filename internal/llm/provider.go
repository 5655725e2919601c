package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// restClient is what the Anthropic and Gemini batch clients share: one
// server's base URL, its credentials (sent to its origin only, never in an
// error), the retry policies of the JSON calls and of the transfers, and the
// bounded reading of every answer (httpretry.ReadAnswer).
type restClient struct {
	base     string
	redactor *httpretry.Redactor // of the API key and the URL's credentials
	header   http.Header         // the credentials and fixed headers
	http     *http.Client
	// Policy bounds each JSON call; Transfer the uploads and downloads.
	Policy, Transfer httpretry.Policy
}

func (c *restClient) client(p httpretry.Policy) *http.Client {
	var base http.RoundTripper
	if c.http != nil {
		base = c.http.Transport
	}
	return httpretry.NewHTTPClient(&httpretry.Transport{Base: base, Policy: p, Origin: httpretry.Origin(c.base), Credentials: c.header})
}

// send sends one request (body from open, reopened for a retry; nil: none)
// and returns the answer for the caller to read and close; a non-2xx answer
// is an *APIError.
func (c *restClient) send(ctx context.Context, p httpretry.Policy, method, u string, open func() (io.ReadCloser, error), header http.Header) (*http.Response, error) {
	var body io.ReadCloser
	if open != nil {
		var err error
		if body, err = open(); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		if body != nil {
			body.Close()
		}
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if open != nil {
		req.GetBody = open
		if req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	resp, err := c.client(p).Do(req)
	if err != nil {
		cerr := c.clean(ctx, err)
		if ctx.Err() == nil && notActed(err) {
			return nil, &notActedError{cerr}
		}
		return nil, cerr
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, c.statusError(resp, u)
	}
	return resp, nil
}

// do sends a JSON call and decodes its 2xx answer (at most
// httpretry.MaxAnswer) into out.
func (c *restClient) do(ctx context.Context, method, u string, body []byte, out any) error {
	var open func() (io.ReadCloser, error)
	if body != nil {
		open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := c.send(ctx, c.Policy, method, u, open, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return c.decode(ctx, resp, u, out)
}

func (c *restClient) decode(ctx context.Context, resp *http.Response, u string, out any) error {
	return c.decodeCap(ctx, resp, u, out, httpretry.MaxAnswer)
}

// decodeCap is decode with an answer of at most limit bytes.
func (c *restClient) decodeCap(ctx context.Context, resp *http.Response, u string, out any, limit int64) error {
	data, err := httpretry.ReadAnswer(ctx, resp.Body, resp.ContentLength, limit, u)
	if err != nil {
		return c.clean(ctx, err)
	}
	return unmarshalAnswer(data, u, out)
}

// statusError is a non-2xx answer as an *APIError: the error body of
// Anthropic ({"type": "error", "error": {"type", "message"}}) and of Google
// ({"error": {"code", "message", "status"}}) are read for their message.
func (c *restClient) statusError(resp *http.Response, u string) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	// Redacted as received, before its fields are decoded: the key may be
	// echoed, escaped, in any of them.
	data = []byte(c.Redact(string(data)))
	ae := &APIError{URL: u, Status: resp.StatusCode, Message: strings.TrimSpace(string(data))}
	var we struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &we) == nil && we.Error != nil {
		ae.Message, ae.Type = we.Error.Message, we.Error.Type
		if ae.Type == "" {
			ae.Type = we.Error.Status
		}
	}
	ae.Message = c.Redact(ae.Message)
	return ae
}

func (c *restClient) clean(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var tl *httpretry.TooLargeError
	if errors.As(err, &tl) {
		return err
	}
	return errors.New(c.Redact(err.Error()))
}

// Redact removes the API key and the credentials of the base URL from s (any
// 8 characters of them in a row), and every credential of a known shape or in
// a URL (httpretry.RedactText).
func (c *restClient) Redact(s string) string {
	return c.redactor.Text(s)
}

// download streams the body of a GET of u to the writer w gives, at most limit
// bytes.
func (c *restClient) download(ctx context.Context, u string, limit int64, w func() (io.Writer, error)) error {
	return download(ctx, c.client(c.Transfer), u, limit, w, c.statusError, func(err error) error { return c.clean(ctx, err) })
}

// jsonArrayBody is a request body streamed from the JSON Lines file at path:
// prefix, then each non-blank line as convert makes it (nil: as it is),
// separated by commas, then suffix. Each call opens the file again (a retry
// sends the body anew); the file is never whole in memory.
func jsonArrayBody(path, prefix, suffix string, convert func([]byte) ([]byte, error)) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		pr, pw := io.Pipe()
		go func() {
			defer f.Close()
			bw := bufio.NewWriterSize(pw, 64<<10)
			br := bufio.NewReaderSize(f, 64<<10)
			_, err := bw.WriteString(prefix)
			first := true
			for err == nil {
				line, rerr := br.ReadBytes('\n')
				if t := bytes.TrimSpace(line); len(t) > 0 {
					if convert != nil {
						if t, err = convert(t); err != nil {
							break
						}
					}
					if !first {
						_ = bw.WriteByte(',')
					}
					first = false
					_, err = bw.Write(t)
				}
				if errors.Is(rerr, io.EOF) {
					break
				}
				if rerr != nil && err == nil {
					err = rerr
				}
			}
			if err == nil {
				_, err = bw.WriteString(suffix)
			}
			if err == nil {
				err = bw.Flush()
			}
			_ = pw.CloseWithError(err)
		}()
		return pr, nil
	}
}

func defaultPolicy() httpretry.Policy { return httpretry.DefaultPolicy }
