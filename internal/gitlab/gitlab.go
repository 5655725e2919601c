// Package gitlab is the GitLab side of retrieval-gate: a GitLab CI job's
// environment as a value (CI, filled by the CLI from GitLab's predefined
// variables) and the REST calls the sticky merge-request note and the
// baseline need (GitLab's REST documentation: "Notes API" for merge-request
// notes, "Users API" for the token's user, "Job artifacts API" for a file of
// the latest successful pipeline of a ref). It knows nothing about reports:
// callers hand it finished Markdown. Every call goes through the httpretry
// policy (retries, 429 with Retry-After, credentials to the API's origin only,
// redaction) and reads its answer bounded: through httpretry.ReadAnswer, or,
// for a page of notes, one note at a time under MaxNote (readNotes).
package gitlab

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/jsoncap"
)

// CI is what a GitLab CI job tells a step through GitLab's predefined
// variables (the CLI reads them; see cli's gitlabCI).
type CI struct {
	InCI   bool   // GITLAB_CI=true
	APIURL string // CI_API_V4_URL, else CI_SERVER_URL + /api/v4
	// ProjectID is the merge request's project (CI_MERGE_REQUEST_PROJECT_ID,
	// else _PATH), else CI_PROJECT_ID, else CI_PROJECT_PATH: an id, or a full
	// path (group/sub/project), which the client URL-encodes.
	ProjectID string
	// MRIID is the merge request's iid (CI_MERGE_REQUEST_IID), 0 outside a
	// merge-request pipeline.
	MRIID int
	// TargetBranch is CI_MERGE_REQUEST_TARGET_BRANCH_NAME, DefaultBranch
	// CI_DEFAULT_BRANCH: the ref a baseline is taken from.
	TargetBranch, DefaultBranch string
	JobURL                      string // CI_JOB_URL, for the note's footer
	ProjectURL                  string // the merge request's project's (CI_MERGE_REQUEST_PROJECT_URL), else CI_PROJECT_URL, for the notes' links
	// Token is the API token: an access token (project, group or personal, with
	// the api scope) from GITLAB_TOKEN; JobToken is CI_JOB_TOKEN, which GitLab
	// accepts on the job-artifacts endpoints but not on notes.
	Token, JobToken string
	// APIURLVar and ProjectIDVar name the variables APIURL and ProjectID were
	// read from (CI_API_V4_URL or CI_SERVER_URL; CI_PROJECT_ID,
	// CI_PROJECT_PATH, CI_MERGE_REQUEST_PROJECT_ID or _PATH), so that a
	// message names the one to fix; "" is CI_API_V4_URL and CI_PROJECT_ID.
	APIURLVar, ProjectIDVar string
	// BadMRIID is CI_MERGE_REQUEST_IID as set when it is not a merge request's
	// iid (a positive integer); MRIID is then 0. "" when unset or valid.
	BadMRIID string
}

// Problem says what keeps the job's variables from naming a project's API
// (nil when APIURL and ProjectID are usable): the variable that is not set,
// or the one whose value is not an http(s) URL or a project id, by name.
func (c CI) Problem() error {
	urlVar, projectVar := cmp.Or(c.APIURLVar, "CI_API_V4_URL"), cmp.Or(c.ProjectIDVar, "CI_PROJECT_ID")
	switch {
	case c.APIURL == "" && c.ProjectID == "":
		return errors.New("CI_API_V4_URL (or CI_SERVER_URL) and CI_PROJECT_ID (or CI_PROJECT_PATH) are not set")
	case c.APIURL == "":
		return errors.New("CI_API_V4_URL (or CI_SERVER_URL) is not set")
	case c.ProjectID == "":
		return errors.New("CI_PROJECT_ID (or CI_PROJECT_PATH) is not set")
	}
	if err := checkAPIURL(c.APIURL); err != nil {
		return fmt.Errorf("%s %w", urlVar, err)
	}
	if err := checkProject(c.ProjectID); err != nil {
		return fmt.Errorf("%s %w", projectVar, err)
	}
	return nil
}

// checkAPIURL refuses an API URL that is not http(s) with a host.
func checkAPIURL(apiURL string) error {
	u, err := url.Parse(strings.TrimRight(apiURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", httpretry.RedactURL(apiURL))
	}
	return nil
}

// checkProject refuses what is neither a project id nor a project's full
// path. GitLab's REST API takes either as :id (REST API documentation,
// "Namespaced paths": the path URL-encoded, group%2Fsub%2Fproject), so a path
// is any number of non-empty segments separated by "/" (groups nest), none of
// them "." or "..", without "?", "#", "%", a control character or white space:
// a path GitLab cannot have, and one that would not stay one segment encoded.
func checkProject(project string) error {
	bad := project == "" || strings.ContainsAny(project, "?#%\\") || strings.ContainsFunc(project, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	})
	for seg := range strings.SplitSeq(project, "/") {
		bad = bad || seg == "" || seg == "." || seg == ".."
	}
	if bad {
		return fmt.Errorf("%q is not a project id or path (a number, or group/project as written, not URL-encoded)", project)
	}
	return nil
}

// BaseRef is the ref a baseline is taken from: the merge request's target
// branch, else the project's default branch.
func (c CI) BaseRef() string {
	if c.TargetBranch != "" {
		return c.TargetBranch
	}
	return c.DefaultBranch
}

// Note is a merge-request note as the API returns it.
type Note struct {
	ID        int64
	Body      string
	Author    string // author.username
	AuthorID  int64
	System    bool
	CreatedAt time.Time
}

// User is the token's user (GET /user).
type User struct {
	ID       int64
	Username string
}

// ErrorKind classifies a failed call.
type ErrorKind int

const (
	KindOther        ErrorKind = iota
	KindForbidden              // 403: the token may not do this
	KindNotFound               // 404: no such project or merge request, or not visible
	KindUnauthorized           // 401: a bad, expired or job token where GitLab wants an access token
	KindRateLimited            // 429 still after the bounded waits
	KindServer                 // 5xx after the bounded retries
	KindNetwork                // no HTTP answer
	KindTooLarge               // an answer over its cap
	// KindScope is a 403 insufficient_scope: the token lacks the scope the
	// call takes (APIError.Scope), e.g. a read_api token writing a note.
	KindScope
)

// APIError is a failed call.
type APIError struct {
	Op      string // "list", "create", "update", "identify", "download"
	Object  string // "MR note", "baseline artifact"
	Kind    ErrorKind
	Status  int    // 0 without an HTTP answer
	Message string // GitLab's message, or why there was no answer
	Scope   string // KindScope: the scope GitLab says the call takes ("api")
}

func (e *APIError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("failed to %s the %s: %s", e.Op, e.Object, e.Message)
	}
	return fmt.Sprintf("failed to %s the %s: GitLab answered %d %s", e.Op, e.Object, e.Status, e.Message)
}

// DefaultPolicy is the GitLab client's: as GitHub's (4 attempts, 30 s each, 3
// minutes in all; a Retry-After within that is waited for, and so is the
// reset of a 429 that gives only RateLimit-Reset or RateLimit-ResetTime, the
// headers of GitLab's user and IP limits), a POST that failed
// with 5xx not re-sent blindly. A 429 that says no wait (the application rate
// limits, such as the one on creating notes, answer without Retry-After) is
// waited for from 16 s doubling to 32 s, with jitter on the upper half of
// each: 40 to 80 s over the three retries, since GitLab counts its rate
// limits per minute (GitLab's "Rate limits" and "Rate limit on Notes
// creation": requests per minute); the backoff of the other retries would
// have given up within 3.5 s, inside the minute that refused.
var DefaultPolicy = httpretry.Policy{Attempts: 4, BaseDelay: 500 * time.Millisecond, MaxDelay: 8 * time.Second,
	RateLimitBase: 16 * time.Second, RateLimitMax: 32 * time.Second,
	Timeout: 30 * time.Second, Budget: 3 * time.Minute, NonIdempotentPOST: true}

// MaxNote bounds one note as the API writes it, in bytes. GitLab's limit on a
// note's body is 1,000,000 characters (GitLab's "Notes API": body), which
// JSON writes in at most 12 bytes each (a character past the Basic
// Multilingual Plane as a surrogate pair of \uXXXX escapes; GitLab writes <,
// > and & as \u003c, \u003e, \u0026), 12,000,000 bytes; the note's other
// fields (its author, its position on a diff) take far less than the 4 MiB
// left. A page of notes is read one note at a time under this cap, so a page
// of 100 notes of 1,000,000 characters each (up to 1.2 GB) is read whole while
// memory holds one note at a time.
const MaxNote = 16 << 20

// noteCap is the cap in force (a test lowers it to exercise the bound quickly).
var noteCap int64 = MaxNote

// Client makes the notes and artifacts calls for one project.
type Client struct {
	http    *http.Client
	api     *url.URL
	project string
	secrets []string
}

// NewClient is a client of the API at apiURL (CI_API_V4_URL) for project
// (CI_PROJECT_ID: an id, or a full path such as group/sub/project), authenticated by an access token (PRIVATE-TOKEN) or, with
// job set, the job token (JOB-TOKEN), under policy.
func NewClient(apiURL, project, token string, job bool, policy httpretry.Policy) (*Client, error) {
	if err := checkAPIURL(apiURL); err != nil {
		return nil, fmt.Errorf("CI_API_V4_URL %w", err)
	}
	if err := checkProject(project); err != nil {
		return nil, fmt.Errorf("CI_PROJECT_ID %w", err)
	}
	u, _ := url.Parse(strings.TrimRight(apiURL, "/"))
	t := &httpretry.Transport{Policy: policy, Origin: httpretry.Origin(apiURL), Secrets: []string{token}}
	if token != "" {
		name := "PRIVATE-TOKEN"
		if job {
			name = "JOB-TOKEN"
		}
		t.Credentials = http.Header{name: {token}}
	}
	return &Client{http: httpretry.NewHTTPClient(t), api: u, project: project, secrets: []string{token}}, nil
}

// endpoint is the API URL of path under /projects/:id, with query. The
// project is one segment, escaped: a path's slashes are %2F (GitLab's
// "Namespaced paths"), which RawPath keeps as written; set from Path alone,
// the URL would write the slashes as "/" (GitLab answers 404), or, escaped
// into Path beforehand, as %252F.
func (c *Client) endpoint(path string, query url.Values) string {
	u := *c.api
	u.Path = c.api.Path + "/projects/" + c.project + path
	u.RawPath = c.api.EscapedPath() + "/projects/" + url.PathEscape(c.project) + escapePath(path)
	u.RawQuery = query.Encode()
	return u.String()
}

// send sends a request and returns its 2xx answer, whose body (bounded at
// limit bytes) the caller reads and closes, or an *APIError.
func (c *Client) send(ctx context.Context, method, target string, body any, op, object string, limit int64) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequestWithContext(httpretry.WithMaxBody(ctx, limit), method, target, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "retrieval-gate")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var rl *httpretry.RateLimitError
		if errors.As(err, &rl) {
			return nil, &APIError{Op: op, Object: object, Kind: KindRateLimited, Status: rl.Status, Message: rl.Why}
		}
		msg := err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			msg = ue.Err.Error()
		}
		return nil, &APIError{Op: op, Object: object, Kind: KindNetwork, Message: httpretry.Redact(msg, c.secrets...)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		data, _ := httpretry.ReadSnippet(resp.Body, 64<<10)
		return nil, statusError(op, object, resp.StatusCode, data, c.secrets)
	}
	return resp, nil
}

// do sends a request and returns the answer's body (at most limit bytes) and
// headers, or an *APIError.
func (c *Client) do(ctx context.Context, method, target string, body any, op, object string, limit int64) ([]byte, http.Header, error) {
	resp, err := c.send(ctx, method, target, body, op, object, limit)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := httpretry.ReadAnswer(ctx, resp.Body, resp.ContentLength, limit, "GitLab")
	if err != nil {
		return nil, nil, c.readError(op, object, err)
	}
	return data, resp.Header, nil
}

// readError is an answer that could not be read: over its cap, or cut off.
func (c *Client) readError(op, object string, err error) *APIError {
	kind := KindNetwork
	var tl *httpretry.TooLargeError
	if errors.As(err, &tl) {
		kind = KindTooLarge
	}
	return &APIError{Op: op, Object: object, Kind: kind, Message: httpretry.Redact(err.Error(), c.secrets...)}
}

// statusError is a non-2xx answer: GitLab's {"message": ...} (a string, or an
// object of field errors) or {"error": ...}; a token without the scope a call
// takes is 403 {"error": "insufficient_scope", "error_description": ...,
// "scope": "api"} (GitLab's "Personal access tokens": a read_api token may
// only read), kept as KindScope with its description and scope.
func statusError(op, object string, status int, body []byte, secrets []string) *APIError {
	var doc struct {
		Message     json.RawMessage `json:"message"`
		Error       string          `json:"error"`
		Description string          `json:"error_description"`
		Scope       string          `json:"scope"`
	}
	msg := http.StatusText(status)
	if json.Unmarshal(body, &doc) == nil {
		var s string
		switch {
		case len(doc.Message) > 0 && json.Unmarshal(doc.Message, &s) == nil:
			msg = s
		case len(doc.Message) > 0:
			// An object of field errors is written back with its strings
			// decoded (json.Marshal escapes no letter or digit), so a secret
			// GitLab echoes in an escaped form ("\u0074") is redacted too.
			msg = string(doc.Message)
			var v any
			dec := json.NewDecoder(bytes.NewReader(doc.Message))
			dec.UseNumber() // numbers as written
			if dec.Decode(&v) == nil {
				var b bytes.Buffer
				enc := json.NewEncoder(&b)
				enc.SetEscapeHTML(false)
				if enc.Encode(v) == nil {
					msg = b.String()
				}
			}
		case doc.Error != "" && doc.Description != "":
			msg = doc.Error + ": " + doc.Description
		case doc.Error != "":
			msg = doc.Error
		}
	}
	// GitLab's messages mostly start with the status ("403 Forbidden"), which
	// Error writes already: "answered 403 Forbidden", not "403 403 Forbidden".
	msg = oneLine(httpretry.Redact(msg, secrets...))
	if m, ok := strings.CutPrefix(msg, strconv.Itoa(status)+" "); ok && m != "" {
		msg = m
	}
	ae := &APIError{Op: op, Object: object, Status: status, Message: msg}
	switch {
	case status == http.StatusForbidden && doc.Error == "insufficient_scope":
		ae.Kind, ae.Scope = KindScope, oneLine(httpretry.Redact(doc.Scope, secrets...))
		if len(ae.Scope) > 64 {
			ae.Scope = ""
		}
	case status == http.StatusTooManyRequests:
		ae.Kind = KindRateLimited
	case status == http.StatusForbidden:
		ae.Kind = KindForbidden
	case status == http.StatusNotFound:
		ae.Kind = KindNotFound
	case status == http.StatusUnauthorized:
		ae.Kind = KindUnauthorized
	case status >= 500:
		ae.Kind = KindServer
	}
	return ae
}

// oneLine keeps the first 300 characters of s on one line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// Self is the token's user (GET /user).
func (c *Client) Self(ctx context.Context) (User, error) {
	u := *c.api
	u.Path += "/user"
	data, _, err := c.do(ctx, http.MethodGet, u.String(), nil, "identify", "token's user", 1<<20)
	if err != nil {
		return User{}, err
	}
	var doc struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	}
	if err := httpretry.UnmarshalAnswer(data, &doc); err != nil || doc.Username == "" {
		return User{}, &APIError{Op: "identify", Object: "token's user", Message: "GET /user answered no username"}
	}
	return User{ID: doc.ID, Username: doc.Username}, nil
}

type noteJSON struct {
	ID     int64  `json:"id"`
	Body   string `json:"body"`
	System bool   `json:"system"`
	Author struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	} `json:"author"`
	CreatedAt time.Time `json:"created_at"`
}

// invalid reports a note without a positive id (GitLab's ids are): the
// sticky comment's upsert edits and deletes notes by id.
func (n noteJSON) invalid() bool { return n.ID <= 0 }

func (n noteJSON) note() Note {
	return Note{ID: n.ID, Body: n.Body, Author: n.Author.Username, AuthorID: n.Author.ID, System: n.System, CreatedAt: n.CreatedAt}
}

// MaxPages bounds the notes listing: at most MaxPages pages of PerPage notes,
// PerPage being the largest page GitLab serves (REST API documentation,
// "Pagination": per_page, "default 20, maximum 100"), so the oldest 30,000
// notes of a merge request.
const (
	MaxPages = 300
	PerPage  = 100
)

// maxPages is the bound in force (a test lowers it to exercise it quickly).
var maxPages = MaxPages

// TruncatedError is ListNotes' error when the merge request has more notes than
// the listing reads: the notes returned with it are the oldest Read.
type TruncatedError struct {
	Read  int // the notes read, oldest first
	Pages int // the pages read
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("the merge request has more notes than the %d read (%d pages of %d, oldest first)", e.Read, e.Pages, PerPage)
}

// ListNotes returns every note of merge request iid, oldest first, following
// X-Next-Page (GitLab's offset pagination; the Link header says the same). It
// reads at most MaxPages pages: when the last of them still names a next page,
// it returns the notes read with a *TruncatedError, never silently fewer.
//
// Each page is read one note at a time, each note at most MaxNote bytes as
// written, and of each note's body only keep(note) is kept (nil keeps it
// whole): a caller that keeps little of the notes it does not need holds one
// note at a time, whatever the page.
func (c *Client) ListNotes(ctx context.Context, iid int, keep func(Note) string) ([]Note, error) {
	var out []Note
	page := "1"
	for n := 1; ; n++ {
		q := url.Values{"sort": {"asc"}, "order_by": {"created_at"}, "per_page": {strconv.Itoa(PerPage)}, "page": {page}}
		h, err := c.listPage(ctx, c.endpoint(fmt.Sprintf("/merge_requests/%d/notes", iid), q), keep, &out)
		if err != nil {
			return nil, err
		}
		next, ok := nextPage(h, page)
		if !ok {
			return out, nil
		}
		if n >= maxPages {
			return out, &TruncatedError{Read: len(out), Pages: n}
		}
		page = next
	}
}

// listPage appends the notes of the page at target to out and returns the
// answer's headers.
func (c *Client) listPage(ctx context.Context, target string, keep func(Note) string, out *[]Note) (http.Header, error) {
	limit := noteCap
	// A page may be a hundred notes at GitLab's limit, over 1 GB as written:
	// the attempt's timeout bounds each pause of its body, not the whole,
	// and the body must keep up the policy's MinRate (a trickle is refused).
	resp, err := c.send(httpretry.WithIdleTimeout(ctx), http.MethodGet, target, nil, "list", "MR notes", int64(PerPage+1)*limit)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := readNotes(resp.Body, limit, keep, out); err != nil {
		var ae *APIError
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, c.readError("list", "MR notes", err)
	}
	return resp.Header, nil
}

// readNotes appends to out the notes of a page, a JSON array read as a stream
// one note at a time: each note at most limit bytes as written (the white
// space and comma before it included), at most PerPage of them (GitLab's
// largest page), each checked as UnmarshalAnswer checks a whole answer (a
// key repeated in another case, too many values), the page refused whole
// when one of them is not a note. Memory holds one note, and what keep keeps
// of the bodies before it.
func readNotes(r io.Reader, limit int64, keep func(Note) string, out *[]Note) error {
	notList := &APIError{Op: "list", Object: "MR notes", Message: "the answer is not a list of notes"}
	// Not encoding/json's Decoder: behind a reader stopped at the cap, it
	// grew its buffer by doubling and allocated some four times the cap
	// before it failed a note over it; the scanner holds the cap and a piece.
	dec := jsoncap.New(bufio.NewReaderSize(r, 32<<10), limit, errNoteTooLarge)
	fail := func(err error) error {
		var se *jsoncap.SyntaxError
		switch {
		case errors.Is(err, errNoteTooLarge):
			return &APIError{Op: "list", Object: "MR notes", Kind: KindTooLarge,
				Message: fmt.Sprintf("a note of the answer is longer than %d bytes, more than a note of 1,000,000 characters takes: refused", limit)}
		case errors.As(err, &se), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return notList
		}
		return err
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(err)
	}
	var notes []Note
	if tok != nil { // null is no notes, as json.Unmarshal reads it
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return notList
		}
		for {
			dec.Mark()
			if !dec.More() {
				break
			}
			if len(notes) == PerPage {
				return &APIError{Op: "list", Object: "MR notes", Message: fmt.Sprintf("the answer holds more than %d notes, GitLab's largest page", PerPage)}
			}
			raw, err := dec.DecodeRaw()
			if err != nil {
				return fail(err)
			}
			var nj noteJSON
			if err := httpretry.UnmarshalAnswerCap(raw, &nj, httpretry.MaxPageValues); err != nil || nj.invalid() {
				return notList
			}
			note := nj.note()
			if k := note.Body; keep != nil {
				note.Body = keep(note)
				if len(note.Body) < len(k) {
					// A part of the body, as a slice, would hold the whole.
					note.Body = strings.Clone(note.Body)
				}
			}
			notes = append(notes, note)
		}
		if _, err := dec.Token(); err != nil { // the closing bracket
			return fail(err)
		}
	}
	dec.Mark()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) { // nothing after the page
		if err == nil {
			return notList
		}
		return fail(err)
	}
	*out = append(*out, notes...)
	return nil
}

// errNoteTooLarge is a note longer than its cap.
var errNoteTooLarge = errors.New("a note of the answer is over its cap")

// nextPage is the X-Next-Page of an answer to page; false when it names no
// further page (empty on the last page, or not a page number).
func nextPage(h http.Header, page string) (string, bool) {
	next := strings.TrimSpace(h.Get("X-Next-Page"))
	n, err := strconv.Atoi(next)
	return next, err == nil && n >= 1 && next != page
}

// CreateNote adds a note to merge request iid.
func (c *Client) CreateNote(ctx context.Context, iid int, body string) (Note, error) {
	return c.writeNote(ctx, http.MethodPost, c.endpoint(fmt.Sprintf("/merge_requests/%d/notes", iid), nil), body, "create")
}

// EditNote replaces the body of note id of merge request iid.
func (c *Client) EditNote(ctx context.Context, iid int, id int64, body string) (Note, error) {
	return c.writeNote(ctx, http.MethodPut, c.endpoint(fmt.Sprintf("/merge_requests/%d/notes/%d", iid, id), nil), body, "update")
}

// DeleteNote deletes note id of merge request iid.
func (c *Client) DeleteNote(ctx context.Context, iid int, id int64) error {
	_, _, err := c.do(ctx, http.MethodDelete, c.endpoint(fmt.Sprintf("/merge_requests/%d/notes/%d", iid, id), nil), nil, "delete", "MR note", 1<<20)
	return err
}

func (c *Client) writeNote(ctx context.Context, method, target, body, op string) (Note, error) {
	data, _, err := c.do(ctx, method, target, map[string]string{"body": body}, op, "MR note", noteCap)
	if err != nil {
		return Note{}, err
	}
	var n noteJSON
	if err := httpretry.UnmarshalAnswer(data, &n); err != nil || n.invalid() {
		return Note{}, &APIError{Op: op, Object: "MR note", Message: "the answer is not a note"}
	}
	return n.note(), nil
}

// RawArtifact writes to w the file path of the artifacts of job on the latest
// successful pipeline of ref ("Download a single artifact file from the
// latest successful pipeline of a ref": GET
// /projects/:id/jobs/artifacts/:ref_name/raw/*artifact_path?job=name), at most
// limit bytes (a longer one is KindTooLarge).
func (c *Client) RawArtifact(ctx context.Context, ref, job, path string, limit int64, w io.Writer) error {
	u := *c.api
	u.Path = c.api.Path + "/projects/" + c.project + "/jobs/artifacts/" + ref + "/raw/" + path
	u.RawPath = c.api.EscapedPath() + "/projects/" + url.PathEscape(c.project) + "/jobs/artifacts/" + url.PathEscape(ref) + "/raw/" + escapePath(path)
	u.RawQuery = url.Values{"job": {job}}.Encode()
	// Up to limit bytes (256 MiB): the attempt's timeout bounds each pause of
	// the body, not the whole, and the body must keep up the policy's
	// MinRate (a trickle is refused).
	req, err := http.NewRequestWithContext(httpretry.WithIdleTimeout(httpretry.WithMaxBody(ctx, limit)), http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "retrieval-gate")
	resp, err := c.http.Do(req)
	if err != nil {
		var rl *httpretry.RateLimitError
		if errors.As(err, &rl) {
			return &APIError{Op: "download", Object: "baseline artifact", Kind: KindRateLimited, Status: rl.Status, Message: rl.Why}
		}
		return &APIError{Op: "download", Object: "baseline artifact", Kind: KindNetwork, Message: httpretry.Redact(err.Error(), c.secrets...)}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := httpretry.ReadSnippet(resp.Body, 64<<10)
		return statusError("download", "baseline artifact", resp.StatusCode, data, c.secrets)
	}
	if resp.ContentLength > limit {
		return &APIError{Op: "download", Object: "baseline artifact", Kind: KindTooLarge, Message: fmt.Sprintf("its %d bytes are over the %d-byte cap", resp.ContentLength, limit)}
	}
	_, err = io.Copy(w, httpretry.LimitBody(resp.Body, resp.ContentLength, limit, "GitLab"))
	if tl := (*httpretry.TooLargeError)(nil); errors.As(err, &tl) {
		return &APIError{Op: "download", Object: "baseline artifact", Kind: KindTooLarge, Message: fmt.Sprintf("it is over the %d-byte cap", limit)}
	}
	if err != nil {
		return &APIError{Op: "download", Object: "baseline artifact", Kind: KindNetwork, Message: httpretry.Redact(err.Error(), c.secrets...)}
	}
	return nil
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}
