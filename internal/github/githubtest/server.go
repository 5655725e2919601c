// Package githubtest is an in-memory GitHub REST API for the issue-comment calls
// retrieval-gate makes, served by net/http/httptest. It follows GitHub's semantics:
// bearer-token auth (401 "Bad credentials"), read-only tokens (403 "Resource not
// accessible by integration"), 404 for unknown pull requests, offset pagination with
// per_page (default 30, max 100) and page and an RFC 8288 Link header, rate-limit
// headers on every answer, 422 for bodies over 65,536 characters, GET /user (a
// user's token gets its login; an installation token such as the Actions token gets
// 403 "Resource not accessible by integration", as on GitHub), comments carrying
// their author's user.login and a node_id, DELETE of a comment (204), and the
// GraphQL endpoint (POST /api/graphql, next to /api/v3 as on GitHub Enterprise
// Server; /graphql, api.github.com's path, is 404 there, as on GHES) with the
// viewer query (the token's login, an installation token's bot too) and the
// minimizeComment mutation: 200 with data, or 200 with an errors array (type NOT_FOUND for an unknown node id, FORBIDDEN for a
// read-only token or when MinimizeForbidden), 401 without valid credentials.
// Faults (5xx, rate limits, redirects to another host) can be queued per method.
// artifacts.go adds the Actions artifacts and workflow-run endpoints, with
// downloads served from a second host; contents.go the repository contents and
// git data endpoints (files on a branch, orphan branches); checks.go the check
// runs with their annotations (create, update, list for a ref).
package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Prefix is the API path prefix, as on GitHub Enterprise Server (/api/v3).
const Prefix = "/api/v3"

// MaxBody is GitHub's comment body limit, in characters.
const MaxBody = 65536

// Comment is a stored issue comment.
type Comment struct {
	ID        int64     `json:"id"`
	PR        int       `json:"pr"`
	User      string    `json:"user"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Minimized is set by the minimizeComment mutation, with its classifier
	// (OUTDATED, DUPLICATE, ...) as MinimizedReason.
	Minimized       bool   `json:"minimized,omitempty"`
	MinimizedReason string `json:"minimized_reason,omitempty"`
}

// NodeID is the comment's GraphQL id, its node_id in REST answers.
func (c *Comment) NodeID() string { return fmt.Sprintf("IC_kwDOfake%d", c.ID) }

// Request is a recorded request.
type Request struct {
	Method string
	Path   string // without Prefix
	Query  url.Values
	Auth   string // the Authorization header as received
	Body   string
}

// Fault is an answer served instead of the real one to the next request of Method.
type Fault struct {
	Method string // GET, POST, PATCH or DELETE; "" matches any
	Path   string // the request path without Prefix (/graphql for GraphQL); "" matches any
	// BodyHas, when set, matches only a request whose body holds it (a
	// GraphQL query by its field: "minimizeComment", "viewer").
	BodyHas string
	Status  int
	Header  http.Header
	Body    string
}

// Server is a fake GitHub API.
type Server struct {
	*httptest.Server

	Owner, Repo string
	Token       string // the accepted token; "" accepts any, including none
	ReadOnly    bool   // the token may read but not write (fork PR token)
	// BotLogin is the login of an installation token, GraphQL's viewer and the
	// author of the comments it creates: github-actions[bot] (the default) for
	// the Actions workflow token, <app-slug>[bot] for a GitHub App's token.
	BotLogin string
	// TokenUser, when set, makes Token a user's token: GET /user answers this
	// login and the comments it creates are by this user. Empty: an installation
	// token (GET /user is 403; GraphQL's viewer and comments are BotLogin).
	TokenUser string
	RateLimit int // X-RateLimit-Limit (default 5000)
	// MinimizeForbidden refuses minimizeComment with a FORBIDDEN error (as GitHub
	// does for a token that may write comments but not minimize them).
	MinimizeForbidden bool
	// DefaultBranch is the repository's default branch ("" is main), created
	// with a README.md on first use of the contents endpoints (contents.go).
	DefaultBranch string

	mu       sync.Mutex
	prs      map[int]bool
	comments []*Comment
	nextID   int64
	faults   []Fault
	requests []Request
	used     int
	now      func() time.Time
	actions  actionsState // workflow runs and artifacts (artifacts.go)
	gitData  gitState     // branches, files and git objects (contents.go)
	checks   checksState  // check runs and their annotations (checks.go)
}

// New starts a fake API for owner/repo with one open pull request, number pr.
func New(owner, repo, token string, prs ...int) *Server {
	s := &Server{
		Owner: owner, Repo: repo, Token: token,
		BotLogin:  "github-actions[bot]",
		RateLimit: 5000,
		prs:       map[int]bool{},
		nextID:    1000,
		now:       time.Now,
	}
	for _, n := range prs {
		s.prs[n] = true
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// APIURL is the value for GITHUB_API_URL.
func (s *Server) APIURL() string { return s.URL + Prefix }

// AddComment stores an existing comment by user on pr and returns its id.
func (s *Server) AddComment(pr int, user, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.add(pr, user, body).ID
}

func (s *Server) add(pr int, user, body string) *Comment {
	s.nextID++
	now := s.now().UTC()
	c := &Comment{ID: s.nextID, PR: pr, User: user, Body: body, CreatedAt: now, UpdatedAt: now}
	s.comments = append(s.comments, c)
	return c
}

// Comments returns copies of the comments on pr, oldest first.
func (s *Server) Comments(pr int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.PR == pr {
			out = append(out, *c)
		}
	}
	return out
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Queue adds faults, served in order to the matching requests.
func (s *Server) Queue(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f...)
}

// ServerError is a 5xx fault with GitHub's JSON error body.
func ServerError(method string, status int) Fault {
	return Fault{Method: method, Status: status, Body: fmt.Sprintf(`{"message":%q}`, http.StatusText(status))}
}

// PrimaryRateLimit is GitHub's answer when the primary rate limit is exhausted:
// 403, X-RateLimit-Remaining: 0 and the reset time resetIn from now.
func PrimaryRateLimit(method string, now time.Time, resetIn time.Duration) Fault {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Used", "5000")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(resetIn).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	return Fault{Method: method, Status: http.StatusForbidden, Header: h,
		Body: `{"message":"API rate limit exceeded for installation ID 1.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`}
}

// SecondaryRateLimit is GitHub's 429/403 answer to too many requests, with Retry-After.
func SecondaryRateLimit(method string, status int, retryAfter int) Fault {
	h := http.Header{}
	h.Set("Retry-After", strconv.Itoa(retryAfter))
	return Fault{Method: method, Status: status, Header: h,
		Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`}
}

// SecondaryRateLimitNoWait is GitHub's 403/429 answer to too many requests
// that gives no Retry-After: the primary limit's headers with requests left
// (remaining, which is not the limit that refused) and the secondary-rate-limit
// message; a client waits at least a minute ("Rate limits for the REST API",
// "Exceeding the rate limit").
func SecondaryRateLimitNoWait(method string, status int, now time.Time) Fault {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "4990")
	h.Set("X-RateLimit-Used", "10")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	return Fault{Method: method, Status: status, Header: h,
		Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`}
}

// Redirect is a fault that sends the next request of method to location (on
// another host, say) with status (307 keeps the method and body).
func Redirect(method string, status int, location string) Fault {
	h := http.Header{}
	h.Set("Location", location)
	return Fault{Method: method, Status: status, Header: h, Body: `{"message":"Moved"}`}
}

var (
	listPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/([0-9]+)/comments$`)
	editPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/comments/([0-9]+)$`)
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()

	var body strings.Builder
	if r.Body != nil {
		_, _ = io.Copy(&body, r.Body)
	}
	path := strings.TrimPrefix(r.URL.Path, Prefix)
	s.requests = append(s.requests, Request{Method: r.Method, Path: path, Query: r.URL.Query(), Auth: r.Header.Get("Authorization"), Body: body.String()})

	// GitHub Enterprise Server's layout, as the REST prefix: GraphQL is at
	// /api/graphql only (recorded as /graphql).
	graphql := r.URL.Path == "/api/graphql"
	if graphql {
		path = "/graphql"
		s.requests[len(s.requests)-1].Path = path
	}
	if !graphql && !strings.HasPrefix(r.URL.Path, Prefix+"/") {
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == r.Method) && (f.Path == "" || f.Path == path) && strings.Contains(body.String(), f.BodyHas) {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			for k, vs := range f.Header {
				w.Header()[k] = vs
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(f.Status)
			fmt.Fprint(w, f.Body)
			return
		}
	}
	if graphql && r.Header.Get("Authorization") == "" {
		// GraphQL has no anonymous access.
		s.write(w, http.StatusUnauthorized, map[string]string{"message": "This endpoint requires you to be authenticated.",
			"documentation_url": "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql"})
		return
	}
	if s.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.Token && r.Header.Get("Authorization") != "token "+s.Token {
		s.fail(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	s.used++
	w.Header().Set("X-RateLimit-Limit", strconv.Itoa(s.RateLimit))
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(max(s.RateLimit-s.used, 0)))
	w.Header().Set("X-RateLimit-Used", strconv.Itoa(s.used))
	w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(s.now().Add(time.Hour).Unix(), 10))
	w.Header().Set("X-RateLimit-Resource", "core")

	if graphql {
		if r.Method != http.MethodPost {
			s.fail(w, http.StatusNotFound, "Not Found")
			return
		}
		s.graphql(w, body.String())
		return
	}
	if path == "/user" && r.Method == http.MethodGet {
		if s.TokenUser == "" {
			// An installation token (the workflow token, a GitHub App's) is no user.
			s.write(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration",
				"documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user", "status": "403"})
			return
		}
		s.write(w, http.StatusOK, map[string]any{"login": s.TokenUser, "id": 1, "type": "User"})
		return
	}
	if m := listPath.FindStringSubmatch(path); m != nil {
		if m[1] != s.Owner || m[2] != s.Repo {
			s.fail(w, http.StatusNotFound, "Not Found")
			return
		}
		pr, _ := strconv.Atoi(m[3])
		if !s.prs[pr] {
			s.fail(w, http.StatusNotFound, "Not Found")
			return
		}
		switch r.Method {
		case http.MethodGet:
			s.list(w, r, pr)
		case http.MethodPost:
			s.create(w, pr, body.String())
		default:
			s.fail(w, http.StatusNotFound, "Not Found")
		}
		return
	}
	if m := editPath.FindStringSubmatch(path); m != nil && (r.Method == http.MethodPatch || r.Method == http.MethodDelete) {
		if m[1] != s.Owner || m[2] != s.Repo {
			s.fail(w, http.StatusNotFound, "Not Found")
			return
		}
		id, _ := strconv.ParseInt(m[3], 10, 64)
		if r.Method == http.MethodDelete {
			s.delete(w, id)
			return
		}
		s.edit(w, id, body.String())
		return
	}
	if s.serveActions(w, r, path) {
		return
	}
	if s.serveContents(w, r, path, body.String()) {
		return
	}
	if s.serveChecks(w, r, path, body.String()) {
		return
	}
	s.fail(w, http.StatusNotFound, "Not Found")
}

func (s *Server) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	doc := "https://docs.github.com/rest"
	if status == http.StatusForbidden {
		doc = "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg, "documentation_url": doc})
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, pr int) {
	perPage, page := 30, 1
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		page = v
	}
	var all []*Comment
	for _, c := range s.comments {
		if c.PR == pr {
			all = append(all, c)
		}
	}
	last := max((len(all)+perPage-1)/perPage, 1)
	from := min((page-1)*perPage, len(all))
	to := min(from+perPage, len(all))
	var links []string
	link := func(p int, rel string) {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		q := u.Query()
		q.Set("per_page", strconv.Itoa(perPage))
		q.Set("page", strconv.Itoa(p))
		u.RawQuery = q.Encode()
		links = append(links, fmt.Sprintf(`<%s>; rel="%s"`, u.String(), rel))
	}
	if page > 1 {
		link(page-1, "prev")
		link(1, "first")
	}
	if page < last {
		link(page+1, "next")
		link(last, "last")
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	out := make([]map[string]any, 0, to-from)
	for _, c := range all[from:to] {
		out = append(out, s.json(c))
	}
	s.write(w, http.StatusOK, out)
}

func (s *Server) create(w http.ResponseWriter, pr int, raw string) {
	if s.ReadOnly {
		s.fail(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	text, ok := s.body(w, raw)
	if !ok {
		return
	}
	s.write(w, http.StatusCreated, s.json(s.add(pr, s.author(), text)))
}

// author is the login of the token's comments.
func (s *Server) author() string {
	if s.TokenUser != "" {
		return s.TokenUser
	}
	return s.BotLogin
}

// delete removes a comment: 204, or 404 when there is none.
func (s *Server) delete(w http.ResponseWriter, id int64) {
	if s.ReadOnly {
		s.fail(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	for i, c := range s.comments {
		if c.ID == id {
			s.comments = append(s.comments[:i], s.comments[i+1:]...)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	s.fail(w, http.StatusNotFound, "Not Found")
}

func (s *Server) edit(w http.ResponseWriter, id int64, raw string) {
	if s.ReadOnly {
		s.fail(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	for _, c := range s.comments {
		if c.ID == id {
			text, ok := s.body(w, raw)
			if !ok {
				return
			}
			c.Body = text
			c.UpdatedAt = s.now().UTC()
			s.write(w, http.StatusOK, s.json(c))
			return
		}
	}
	s.fail(w, http.StatusNotFound, "Not Found")
}

// body decodes {"body": ...} and enforces GitHub's validation.
func (s *Server) body(w http.ResponseWriter, raw string) (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		s.fail(w, http.StatusBadRequest, "Problems parsing JSON")
		return "", false
	}
	if in.Body == nil || *in.Body == "" {
		s.validation(w, "missing_field", "body is missing")
		return "", false
	}
	if utf8.RuneCountInString(*in.Body) > MaxBody {
		s.validation(w, "custom", fmt.Sprintf("body is too long (maximum is %d characters)", MaxBody))
		return "", false
	}
	return *in.Body, true
}

func (s *Server) validation(w http.ResponseWriter, code, msg string) {
	s.write(w, http.StatusUnprocessableEntity, map[string]any{
		"message":           "Validation Failed",
		"errors":            []map[string]string{{"resource": "IssueComment", "code": code, "field": "body", "message": msg}},
		"documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
	})
}

func (s *Server) json(c *Comment) map[string]any {
	return map[string]any{
		"id":         c.ID,
		"node_id":    c.NodeID(),
		"body":       c.Body,
		"user":       map[string]any{"login": c.User, "type": userType(c.User)},
		"created_at": c.CreatedAt.Format(time.RFC3339),
		"updated_at": c.UpdatedAt.Format(time.RFC3339),
		"html_url":   fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", s.Owner, s.Repo, c.PR, c.ID),
		"url":        fmt.Sprintf("%s%s/repos/%s/%s/issues/comments/%d", s.URL, Prefix, s.Owner, s.Repo, c.ID),
		"issue_url":  fmt.Sprintf("%s%s/repos/%s/%s/issues/%d", s.URL, Prefix, s.Owner, s.Repo, c.PR),
	}
}

func (s *Server) write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func userType(login string) string {
	if strings.HasSuffix(login, "[bot]") {
		return "Bot"
	}
	return "User"
}
