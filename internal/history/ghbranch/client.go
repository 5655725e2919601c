package ghbranch

import (
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // G505: git object ids are SHA-1; used to check a download, nothing is protected by it
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// Kind classifies a failed call for the message the user sees.
type Kind int

const (
	KindOther        Kind = iota
	KindForbidden         // 403 that is not a rate limit: the token may not write (or read) contents
	KindNotFound          // 404 of the repository: not visible to the token
	KindUnauthorized      // 401: bad or expired token
	KindRateLimited       // a rate limit still exhausted after httpretry's bounded waits
	KindConflict          // another run changed the branch on every attempt
	KindTooLarge          // a file over GitHub's 100 MB
	KindServer            // 5xx after the retries, or an answer that is not GitHub's
	KindNetwork           // no HTTP answer
	KindInvalid           // the branch holds something that is not a history
)

// Error is a failed call to the branch.
type Error struct {
	Op      string // what was being done: "read history.jsonl", "write index.html", …
	Kind    Kind
	Status  int    // HTTP status, 0 without one
	Message string // GitHub's message or the cause, one line, without secrets
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("could not %s: %s", e.Op, e.Message)
	}
	return fmt.Sprintf("could not %s: GitHub answered %d %s", e.Op, e.Status, e.Message)
}

// Fix is what the user can do about e ("" when nothing specific).
func (e *Error) Fix() string {
	switch e.Kind {
	case KindForbidden:
		return "give the job `permissions: contents: write` (the token may not write the repository's contents)"
	case KindUnauthorized:
		return "check the `github-token` input: GitHub did not accept it"
	case KindNotFound:
		return "check GITHUB_REPOSITORY and that the token can see the repository (`permissions: contents: write`)"
	case KindRateLimited:
		return "the next run appends again; fewer API calls per hour leave room"
	case KindConflict:
		return "other runs kept writing the branch at the same time; the next run appends again"
	case KindTooLarge:
		return "the history is over GitHub's 100 MB per file: move history.jsonl aside on the branch (it starts again)"
	case KindInvalid:
		return "repair or remove the file on the branch"
	}
	return ""
}

var (
	errNoBranch = errors.New("no such branch")
	errConflict = errors.New("conflict")
)

// Policy is the retry policy of the default client: GitHub's, with POST retried
// on 5xx (creating a blob, tree or commit is idempotent in effect, and a ref
// created twice is a 422 the append loop handles) and a per-attempt timeout long
// enough to send a 100 MB file.
var Policy = func() httpretry.Policy {
	p := github.DefaultPolicy
	p.NonIdempotentPOST = false
	p.Timeout, p.Budget = 3*time.Minute, 8*time.Minute
	return p
}()

// maxJSON caps an API answer: a 100 MB file as base64 with line breaks, plus
// the JSON around it.
const maxJSON = MaxFile/3*4 + MaxFile/60 + 1<<20

// Client reads and writes files on branches of one repository through the
// contents and git data REST APIs.
type Client struct {
	api         *url.URL
	owner, repo string
	http        *http.Client
}

// Deps is what New needs, injected.
type Deps struct {
	APIURL string // GITHUB_API_URL; "" is https://api.github.com
	Repo   string // GITHUB_REPOSITORY, owner/name
	Token  string // "" sends no Authorization (public repositories can be read)
	// Policy replaces Policy (tests shorten the waits); nil is Policy.
	Policy *httpretry.Policy
	// Base is the transport under the retries; nil is http.DefaultTransport.
	Base http.RoundTripper
}

// New returns a client for d.Repo. The token is sent only to the API's origin
// and redacted from every error.
func New(d Deps) (*Client, error) {
	owner, repo, ok := strings.Cut(d.Repo, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", github.OneLine(d.Repo))
	}
	raw := strings.TrimRight(strings.TrimSpace(d.APIURL), "/")
	if raw == "" {
		raw = github.DefaultAPIURL
	}
	api, err := url.Parse(raw)
	if err != nil || (api.Scheme != "http" && api.Scheme != "https") || api.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not an http(s) URL", github.OneLine(httpretry.RedactURL(raw)))
	}
	p := Policy
	if d.Policy != nil {
		p = *d.Policy
	}
	t := &httpretry.Transport{Base: d.Base, Policy: p, Origin: httpretry.Origin(raw), Secrets: []string{d.Token}, MaxBody: maxJSON}
	if d.Token != "" {
		t.Credentials = http.Header{"Authorization": {"Bearer " + d.Token}}
	}
	return &Client{api: api, owner: owner, repo: repo, http: httpretry.NewHTTPClient(t)}, nil
}

func (c *Client) endpoint(parts ...string) *url.URL {
	return c.api.JoinPath(append([]string{"repos", c.owner, c.repo}, parts...)...)
}

// do sends one request and returns the answer's status and body (at most
// maxJSON bytes).
func (c *Client) do(ctx context.Context, method string, u *url.URL, accept string, body any, op string) (int, []byte, error) {
	var rd io.Reader
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return 0, nil, &Error{Op: op, Kind: KindOther, Message: "could not build the request"}
	}
	if body != nil {
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "retrieval-gate")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, netError(ctx, op, err)
	}
	defer resp.Body.Close()
	b, err := httpretry.ReadAnswer(ctx, resp.Body, resp.ContentLength, maxJSON, u.Redacted())
	if tl := (*httpretry.TooLargeError)(nil); errors.As(err, &tl) {
		return 0, nil, &Error{Op: op, Kind: KindTooLarge, Status: resp.StatusCode, Message: "the answer is larger than a 100 MB file"}
	}
	if err != nil {
		return 0, nil, netError(ctx, op, err)
	}
	return resp.StatusCode, b, nil
}

func netError(ctx context.Context, op string, err error) *Error {
	if ctx.Err() != nil {
		return &Error{Op: op, Kind: KindNetwork, Message: "cancelled (" + ctx.Err().Error() + ")"}
	}
	var rl *httpretry.RateLimitError
	if errors.As(err, &rl) {
		return &Error{Op: op, Kind: KindRateLimited, Status: rl.Status, Message: "GitHub's API rate limit: " + github.OneLine(rl.Why)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is said by Op
	}
	return &Error{Op: op, Kind: KindNetwork, Message: github.OneLine(err.Error())}
}

// apiError turns a status the caller does not handle into an *Error.
func apiError(op string, status int, body []byte) *Error {
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &m)
	msg := github.OneLine(m.Message)
	if msg == "" {
		msg = http.StatusText(status)
	}
	k := KindOther
	switch {
	case status == http.StatusUnauthorized:
		k = KindUnauthorized
	case status == http.StatusForbidden && strings.Contains(strings.ToLower(msg), "rate limit"):
		k = KindRateLimited
	case status == http.StatusForbidden:
		k = KindForbidden
	case status == http.StatusNotFound:
		k = KindNotFound
	case status >= 500:
		k = KindServer
	}
	return &Error{Op: op, Kind: k, Status: status, Message: msg}
}

// file is a file read from a branch.
type file struct {
	content []byte
	sha     string // git blob id
}

// get reads path at branch: nil (no error) when the branch has no such file,
// errNoBranch when there is no such branch.
func (c *Client) get(ctx context.Context, branch, path string) (*file, error) {
	op := "read " + path + " on branch " + github.OneLine(branch)
	u := c.endpoint("contents", path)
	u.RawQuery = url.Values{"ref": {branch}}.Encode()
	// The object media type answers files of 1-100 MB with "encoding": "none"
	// (the default type refuses them with 403 too_large).
	st, body, err := c.do(ctx, http.MethodGet, u, "application/vnd.github.object+json", nil, op)
	if err != nil {
		return nil, err
	}
	switch st {
	case http.StatusOK:
	case http.StatusNotFound:
		// The branch or the file: the branch's ref says which.
		ok, err := c.branchExists(ctx, branch)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errNoBranch
		}
		return nil, nil
	default:
		return nil, apiError(op, st, body)
	}
	var f contentsFile
	if err := httpretry.UnmarshalAnswer(body, &f); err != nil || f.Type == "" {
		if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
			return nil, &Error{Op: op, Kind: KindInvalid, Message: path + " is a directory"}
		}
		return nil, &Error{Op: op, Kind: KindServer, Message: "the answer is not GitHub's contents JSON"}
	}
	if f.Type != "file" {
		return nil, &Error{Op: op, Kind: KindInvalid, Message: fmt.Sprintf("%s is a %s, not a file", path, github.OneLine(f.Type))}
	}
	content, err := f.decode()
	if err != nil {
		return nil, &Error{Op: op, Kind: KindServer, Message: err.Error()}
	}
	if f.Encoding == "none" {
		// Over 1 MB: the blob, through the git data API (up to 100 MB).
		if content, err = c.blob(ctx, f.SHA, f.Size, op); err != nil {
			return nil, err
		}
	}
	if got := BlobSHA(content); got != f.SHA {
		return nil, &Error{Op: op, Kind: KindServer, Message: fmt.Sprintf("the content read does not have its sha %s (got %s)", github.OneLine(f.SHA), got)}
	}
	return &file{content: content, sha: f.SHA}, nil
}

// contentsFile is the JSON of a file from GET contents or GET git/blobs.
type contentsFile struct {
	Type     string `json:"type"`
	SHA      string `json:"sha"`
	Size     int64  `json:"size"`
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
}

// decode is the file's content: base64 (wrapped with line breaks, as GitHub
// sends it), empty for "none" (read the blob), or an error.
func (f *contentsFile) decode() ([]byte, error) {
	if !validSHA(f.SHA) {
		return nil, fmt.Errorf("the file's sha %q is not a git object id", github.OneLine(f.SHA))
	}
	if f.Size < 0 || f.Size > MaxFile {
		return nil, fmt.Errorf("the file's size %d is outside [0, %d]", f.Size, MaxFile)
	}
	switch f.Encoding {
	case "none":
		if f.Content != "" {
			return nil, errors.New(`encoding "none" with a content`)
		}
		return nil, nil
	case "base64":
	default:
		return nil, fmt.Errorf("unknown encoding %q", github.OneLine(f.Encoding))
	}
	b, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\n", "", "\r", "").Replace(f.Content))
	if err != nil {
		return nil, errors.New("the content is not valid base64")
	}
	if int64(len(b)) != f.Size {
		return nil, fmt.Errorf("the content has %d bytes, its size says %d", len(b), f.Size)
	}
	return b, nil
}

func validSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// BlobSHA is git's id of a blob: SHA-1 of "blob <size>\0" and the content.
func BlobSHA(content []byte) string {
	h := sha1.New() //nolint:gosec // G401: git's object id
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// blob reads a blob of up to MaxFile bytes through GET git/blobs/{sha}.
func (c *Client) blob(ctx context.Context, sha string, size int64, op string) ([]byte, error) {
	if size > MaxFile {
		return nil, &Error{Op: op, Kind: KindTooLarge, Message: fmt.Sprintf("the file has %d bytes, over GitHub's %d", size, MaxFile)}
	}
	st, body, err := c.do(ctx, http.MethodGet, c.endpoint("git", "blobs", sha), "application/vnd.github+json", nil, op)
	if err != nil {
		return nil, err
	}
	if st != http.StatusOK {
		return nil, apiError(op, st, body)
	}
	var f contentsFile
	if err := httpretry.UnmarshalAnswer(body, &f); err != nil {
		return nil, &Error{Op: op, Kind: KindServer, Message: "the blob's answer is not GitHub's JSON"}
	}
	if f.Encoding != "base64" {
		return nil, &Error{Op: op, Kind: KindServer, Message: fmt.Sprintf("the blob's encoding is %q, not base64", github.OneLine(f.Encoding))}
	}
	b, err := f.decode()
	if err != nil {
		return nil, &Error{Op: op, Kind: KindServer, Message: "the blob: " + err.Error()}
	}
	return b, nil
}

// branchExists asks GET git/ref/heads/{branch}.
func (c *Client) branchExists(ctx context.Context, branch string) (bool, error) {
	op := "look up branch " + github.OneLine(branch)
	st, body, err := c.do(ctx, http.MethodGet, c.endpoint(append([]string{"git", "ref", "heads"}, strings.Split(branch, "/")...)...), "application/vnd.github+json", nil, op)
	if err != nil {
		return false, err
	}
	switch st {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound:
		// The branch, or the whole repository, is missing: the repository says which.
		st2, body2, err := c.do(ctx, http.MethodGet, c.endpoint(), "application/vnd.github+json", nil, "read the repository")
		if err != nil {
			return false, err
		}
		if st2 != http.StatusOK {
			return false, apiError("read the repository", st2, body2)
		}
		return false, nil
	}
	return false, apiError(op, st, body)
}

// put creates (sha "") or updates path on branch: errConflict when sha is not
// the file's current one (409) or is missing for a file that now exists (422),
// errNoBranch when the branch is gone (404).
func (c *Client) put(ctx context.Context, branch, path, message string, content []byte, sha string) error {
	op := "write " + path + " on branch " + github.OneLine(branch)
	if len(content) > MaxFile {
		return &Error{Op: op, Kind: KindTooLarge, Message: fmt.Sprintf("%d bytes, over GitHub's %d per file", len(content), MaxFile)}
	}
	body := map[string]string{"message": message, "content": base64.StdEncoding.EncodeToString(content), "branch": branch}
	if sha != "" {
		body["sha"] = sha
	}
	st, resp, err := c.do(ctx, http.MethodPut, c.endpoint("contents", path), "application/vnd.github+json", body, op)
	if err != nil {
		return err
	}
	switch st {
	case http.StatusOK, http.StatusCreated:
		return nil
	case http.StatusConflict:
		return errConflict
	case http.StatusUnprocessableEntity:
		if e := apiError(op, st, resp); strings.Contains(e.Message, `"sha"`) {
			return errConflict
		}
	case http.StatusNotFound:
		ok, err := c.branchExists(ctx, branch)
		if err != nil {
			return err
		}
		if !ok {
			return errNoBranch
		}
	}
	return apiError(op, st, resp)
}

// createBranch creates branch as an orphan (a first commit without parents)
// holding files: each a blob (POST git/blobs, base64), then the tree, the
// commit and the ref. errConflict when another run created it first (422
// "Reference already exists").
func (c *Client) createBranch(ctx context.Context, branch, message string, files map[string][]byte, order []string) error {
	op := "create branch " + github.OneLine(branch)
	type entry struct {
		Path string `json:"path"`
		Mode string `json:"mode"`
		Type string `json:"type"`
		SHA  string `json:"sha"`
	}
	var tree []entry
	for _, p := range order {
		var out struct {
			SHA string `json:"sha"`
		}
		if err := c.post(ctx, op, "blobs", map[string]string{"content": base64.StdEncoding.EncodeToString(files[p]), "encoding": "base64"}, &out); err != nil {
			return err
		}
		if out.SHA != BlobSHA(files[p]) {
			return &Error{Op: op, Kind: KindServer, Message: "GitHub stored " + p + " under another sha"}
		}
		tree = append(tree, entry{Path: p, Mode: "100644", Type: "blob", SHA: out.SHA})
	}
	var t, cm struct {
		SHA string `json:"sha"`
	}
	if err := c.post(ctx, op, "trees", map[string]any{"tree": tree}, &t); err != nil {
		return err
	}
	if err := c.post(ctx, op, "commits", map[string]any{"message": message, "tree": t.SHA, "parents": []string{}}, &cm); err != nil {
		return err
	}
	err := c.post(ctx, op, "refs", map[string]string{"ref": "refs/heads/" + branch, "sha": cm.SHA}, nil)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusUnprocessableEntity && strings.Contains(strings.ToLower(e.Message), "already exists") {
		return errConflict
	}
	return err
}

func (c *Client) post(ctx context.Context, op, what string, body, out any) error {
	st, resp, err := c.do(ctx, http.MethodPost, c.endpoint("git", what), "application/vnd.github+json", body, op)
	if err != nil {
		return err
	}
	if st != http.StatusCreated {
		return apiError(op, st, resp)
	}
	if out != nil {
		if err := httpretry.UnmarshalAnswer(resp, out); err != nil {
			return &Error{Op: op, Kind: KindServer, Message: "the answer is not GitHub's JSON"}
		}
	}
	return nil
}
