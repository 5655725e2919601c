// Package gitlabtest is an in-memory GitLab REST API (v4) for the calls
// retrieval-gate makes, served by net/http/httptest, written from GitLab's REST
// documentation:
//
//   - "REST API authentication": an access token in PRIVATE-TOKEN (or
//     Authorization: Bearer); a missing or unknown one is 401 {"message":"401
//     Unauthorized"}. CI_JOB_TOKEN in JOB-TOKEN is accepted only on the
//     endpoints GitLab's "CI/CD job token" page lists for it (here: the job
//     artifacts); on the others it is 401 too.
//   - "Users API": GET /user, the token's user ({"id", "username"}).
//   - "Notes API", merge requests: GET /projects/:id/merge_requests/:iid/notes
//     (sort asc|desc, order_by created_at|updated_at, offset pagination: page,
//     per_page default 20 and at most 100, with the X-Page, X-Per-Page, X-Total,
//     X-Total-Pages, X-Next-Page and X-Prev-Page headers and an RFC 8288 Link
//     header), POST (201; body required and at most 1,000,000 characters, else
//     400 with the field's errors), PUT .../notes/:note_id (200; only the note's
//     author may edit it: 403 "403 Forbidden" for anyone else), DELETE (204, the
//     author only). An unknown project or merge request is 404 "404 Project Not
//     Found" / "404 Not found". A token that may read but not comment
//     (ReadOnly) is 403 on writes.
//   - "Personal access tokens", scopes: a token of the read_api scope
//     (ReadAPI) may call every GET but no POST, PUT or DELETE, which GitLab
//     answers 403 {"error":"insufficient_scope","error_description":"The
//     request requires higher privileges than provided by the access
//     token.","scope":"api"} with a WWW-Authenticate header that says the same.
//   - "Job artifacts API": GET /projects/:id/jobs/artifacts/:ref_name/raw/*artifact_path?job=name,
//     the file from the named job of the latest successful pipeline of the ref:
//     404 when there is none, or the job or file is missing.
//   - "Namespaced paths" (REST API): a project's :id is its id or its full
//     path URL-encoded, each "/" written %2F (group%2Fsub%2Fproject); the path
//     with its slashes as written matches no route (404 Not Found), and one
//     encoded twice (%252F) names no project (404 Project Not Found).
//   - "Rate limits": a queued RateLimit fault answers 429 with Retry-After and
//     RateLimit-Limit, RateLimit-Observed, RateLimit-Remaining, RateLimit-Reset
//     (Unix seconds) and RateLimit-ResetTime (an HTTP date), body "Retry
//     later" (the user and IP limits; Fault.Without drops some of them); a
//     queued AppRateLimit fault answers as an application limit does ("Rate
//     limit on Notes creation", counted per minute): 429 without any of those
//     headers, body {"message":{"error":"This endpoint has been requested too
//     many times. Try again later."}}.
//
// Faults (5xx, 429) can be queued per method and path.
package gitlabtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Prefix is the API path prefix.
const Prefix = "/api/v4"

// MaxNote is GitLab's limit on a note's body, in characters.
const MaxNote = 1000000

// Note is a stored merge-request note.
type Note struct {
	ID        int64     `json:"id"`
	MR        int       `json:"mr"`
	Author    string    `json:"author"`
	Body      string    `json:"body"`
	System    bool      `json:"system,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Pipeline is a pipeline of a ref with its jobs' artifact files.
type Pipeline struct {
	ID     int64                        `json:"id"`
	Ref    string                       `json:"ref"`
	Status string                       `json:"status"` // success, failed, running, ...
	Files  map[string]map[string][]byte `json:"files"`  // job name -> path -> content
}

// Request is a recorded request.
type Request struct {
	Method, Path string // Path without Prefix, as sent (escaped: a project path's slashes are %2F)
	Query        url.Values
	PrivateToken string
	JobToken     string
	Body         string
}

// Fault is an answer served instead of the real one to the next matching request.
type Fault struct {
	Method, Path string // "" matches any; Path without Prefix
	Status       int
	Header       http.Header
	Body         string
}

// Server is a fake GitLab.
type Server struct {
	*httptest.Server

	ProjectID string
	// ProjectPath is the project's full path (group/sub/project), which the
	// API takes as :id too, URL-encoded; "" for none.
	ProjectPath string
	// Tokens maps each accepted access token to its user's username.
	Tokens   map[string]string
	JobToken string // the job's CI_JOB_TOKEN ("" accepts none)
	ReadOnly bool   // tokens may read but not write notes (403)
	// ReadAPI holds the access tokens of the read_api scope: GET only, any
	// other method 403 insufficient_scope.
	ReadAPI map[string]bool

	mu        sync.Mutex
	mrs       map[int]bool
	notes     []*Note
	pipelines []*Pipeline
	nextID    int64
	users     map[string]int64
	faults    []Fault
	requests  []Request
	now       func() time.Time
}

// New starts a fake GitLab for project id with the merge requests mrs; token is
// an access token of user.
func New(project, token, user string, mrs ...int) *Server {
	s := &Server{ProjectID: project, Tokens: map[string]string{}, ReadAPI: map[string]bool{}, mrs: map[int]bool{}, nextID: 500, users: map[string]int64{}, now: time.Now}
	if token != "" {
		s.Tokens[token] = user
	}
	for _, m := range mrs {
		s.mrs[m] = true
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// APIURL is the value of CI_API_V4_URL.
func (s *Server) APIURL() string { return s.URL + Prefix }

// AddNote stores a note by author on merge request mr and returns its id.
func (s *Server) AddNote(mr int, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.add(mr, author, body).ID
}

func (s *Server) add(mr int, author, body string) *Note {
	s.nextID++
	now := s.now().UTC()
	n := &Note{ID: s.nextID, MR: mr, Author: author, Body: body, CreatedAt: now, UpdatedAt: now}
	s.notes = append(s.notes, n)
	return n
}

// AddPipeline stores a pipeline.
func (s *Server) AddPipeline(p Pipeline) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	p.ID = s.nextID
	s.pipelines = append(s.pipelines, &p)
}

// Notes returns copies of the notes of mr, oldest first.
func (s *Server) Notes(mr int) []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Note
	for _, n := range s.notes {
		if n.MR == mr {
			out = append(out, *n)
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

// RateLimit is GitLab's 429: Retry-After seconds and the RateLimit headers.
func RateLimit(method string, now time.Time, retryAfter int) Fault {
	h := http.Header{}
	reset := now.Add(time.Duration(retryAfter) * time.Second)
	h.Set("Retry-After", strconv.Itoa(retryAfter))
	h.Set("RateLimit-Limit", "600")
	h.Set("RateLimit-Observed", "601")
	h.Set("RateLimit-Remaining", "0")
	h.Set("RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("RateLimit-ResetTime", reset.UTC().Format(http.TimeFormat))
	h.Set("Content-Type", "text/plain")
	return Fault{Method: method, Status: http.StatusTooManyRequests, Header: h, Body: "Retry later\n"}
}

// Without is f without the headers named: a RateLimit without Retry-After
// is a 429 whose wait only RateLimit-Reset and RateLimit-ResetTime give (as
// GitLab's answers without Retry-After do: a limit of its own endpoints
// gives the RateLimit headers alone).
func (f Fault) Without(names ...string) Fault {
	f.Header = f.Header.Clone()
	for _, n := range names {
		f.Header.Del(n)
	}
	return f
}

// With is f with the header name set to value.
func (f Fault) With(name, value string) Fault {
	f.Header = f.Header.Clone()
	if f.Header == nil {
		f.Header = http.Header{}
	}
	f.Header.Set(name, value)
	return f
}

// AppRateLimit is the 429 of one of GitLab's application rate limits (the
// one on creating notes among them): no Retry-After, no RateLimit headers.
func AppRateLimit(method string) Fault {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return Fault{Method: method, Status: http.StatusTooManyRequests, Header: h,
		Body: `{"message":{"error":"This endpoint has been requested too many times. Try again later."}}`}
}

// ServerError is a 5xx fault.
func ServerError(method string, status int) Fault {
	return Fault{Method: method, Status: status, Body: fmt.Sprintf(`{"message":"%d %s"}`, status, http.StatusText(status))}
}

var (
	notesPath    = regexp.MustCompile(`^/projects/([^/]+)/merge_requests/([0-9]+)/notes$`)
	notePath     = regexp.MustCompile(`^/projects/([^/]+)/merge_requests/([0-9]+)/notes/([0-9]+)$`)
	artifactPath = regexp.MustCompile(`^/projects/([^/]+)/jobs/artifacts/([^/]+)/raw/(.+)$`)
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	// Routes match the path as sent: a project's :id is one segment, its
	// slashes escaped, and decoded once (mr, artifact).
	path := strings.TrimPrefix(r.URL.EscapedPath(), Prefix)
	priv := r.Header.Get("PRIVATE-TOKEN")
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && priv == "" {
		priv = b
	}
	job := r.Header.Get("JOB-TOKEN")
	s.requests = append(s.requests, Request{Method: r.Method, Path: path, Query: r.URL.Query(), PrivateToken: priv, JobToken: job, Body: string(raw)})
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == r.Method) && (f.Path == "" || f.Path == path) {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			for k, vs := range f.Header {
				w.Header()[k] = vs
			}
			if w.Header().Get("Content-Type") == "" {
				w.Header().Set("Content-Type", "application/json")
			}
			w.WriteHeader(f.Status)
			fmt.Fprint(w, f.Body)
			return
		}
	}
	if !strings.HasPrefix(r.URL.Path, Prefix+"/") {
		s.message(w, http.StatusNotFound, "404 Not Found")
		return
	}
	user, viaJob := "", false
	switch {
	case priv != "":
		u, ok := s.Tokens[priv]
		if !ok {
			s.message(w, http.StatusUnauthorized, "401 Unauthorized")
			return
		}
		user = u
		if s.ReadAPI[priv] && r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("WWW-Authenticate", `Bearer realm="", error="insufficient_scope", error_description="The request requires higher privileges than provided by the access token.", scope="api"`)
			s.write(w, http.StatusForbidden, map[string]string{"error": "insufficient_scope",
				"error_description": "The request requires higher privileges than provided by the access token.", "scope": "api"})
			return
		}
	case job != "" && s.JobToken != "" && job == s.JobToken:
		viaJob = true
	default:
		s.message(w, http.StatusUnauthorized, "401 Unauthorized")
		return
	}
	if m := artifactPath.FindStringSubmatch(path); m != nil && r.Method == http.MethodGet {
		s.artifact(w, r, m)
		return
	}
	if viaJob { // the job token reaches the job artifacts alone
		s.message(w, http.StatusUnauthorized, "401 Unauthorized")
		return
	}
	if path == "/user" && r.Method == http.MethodGet {
		s.write(w, http.StatusOK, map[string]any{"id": s.userID(user), "username": user, "name": user, "state": "active", "bot": strings.HasPrefix(user, "project_")})
		return
	}
	if m := notesPath.FindStringSubmatch(path); m != nil {
		mr, ok := s.mr(w, m[1], m[2])
		if !ok {
			return
		}
		switch r.Method {
		case http.MethodGet:
			s.list(w, r, mr)
		case http.MethodPost:
			if s.ReadOnly {
				s.message(w, http.StatusForbidden, "403 Forbidden")
				return
			}
			body, ok := s.body(w, raw)
			if !ok {
				return
			}
			s.write(w, http.StatusCreated, s.json(s.add(mr, user, body)))
		default:
			s.message(w, http.StatusMethodNotAllowed, "405 Method Not Allowed")
		}
		return
	}
	if m := notePath.FindStringSubmatch(path); m != nil {
		mr, ok := s.mr(w, m[1], m[2])
		if !ok {
			return
		}
		id, _ := strconv.ParseInt(m[3], 10, 64)
		var n *Note
		for _, c := range s.notes {
			if c.ID == id && c.MR == mr {
				n = c
			}
		}
		if n == nil {
			s.message(w, http.StatusNotFound, "404 Not found")
			return
		}
		if s.ReadOnly || n.Author != user {
			s.message(w, http.StatusForbidden, "403 Forbidden")
			return
		}
		switch r.Method {
		case http.MethodPut:
			body, ok := s.body(w, raw)
			if !ok {
				return
			}
			n.Body, n.UpdatedAt = body, s.now().UTC()
			s.write(w, http.StatusOK, s.json(n))
		case http.MethodDelete:
			for i, c := range s.notes {
				if c == n {
					s.notes = append(s.notes[:i], s.notes[i+1:]...)
					break
				}
			}
			w.WriteHeader(http.StatusNoContent)
		default:
			s.message(w, http.StatusMethodNotAllowed, "405 Method Not Allowed")
		}
		return
	}
	s.message(w, http.StatusNotFound, "404 Not Found")
}

func (s *Server) userID(name string) int64 {
	if id, ok := s.users[name]; ok {
		return id
	}
	id := int64(len(s.users) + 7)
	s.users[name] = id
	return id
}

// project reports whether the :id segment of a path, as sent, names the
// project: its id, or its full path URL-encoded, decoded once.
func (s *Server) project(segment string) bool {
	p, err := url.PathUnescape(segment)
	return err == nil && (p == s.ProjectID || (s.ProjectPath != "" && p == s.ProjectPath))
}

// mr checks the project and merge request of a notes path.
func (s *Server) mr(w http.ResponseWriter, project, iid string) (int, bool) {
	if !s.project(project) {
		s.message(w, http.StatusNotFound, "404 Project Not Found")
		return 0, false
	}
	mr, _ := strconv.Atoi(iid)
	if !s.mrs[mr] {
		s.message(w, http.StatusNotFound, "404 Not found")
		return 0, false
	}
	return mr, true
}

func (s *Server) body(w http.ResponseWriter, raw []byte) (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || in.Body == nil || *in.Body == "" {
		s.write(w, http.StatusBadRequest, map[string]any{"message": "400 Bad request - body is missing"})
		return "", false
	}
	if n := utf8.RuneCountInString(*in.Body); n > MaxNote {
		s.write(w, http.StatusBadRequest, map[string]any{"message": map[string]any{"note": []string{fmt.Sprintf("is too long (%d characters). The maximum size is %d characters.", n, MaxNote)}}})
		return "", false
	}
	return *in.Body, true
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, mr int) {
	q := r.URL.Query()
	all := make([]*Note, 0, len(s.notes))
	for _, n := range s.notes {
		if n.MR == mr {
			all = append(all, n)
		}
	}
	byUpdated := q.Get("order_by") == "updated_at" // looked up once: a listing of 30,000 notes sorts them on every page
	by := func(n *Note) time.Time {
		if byUpdated {
			return n.UpdatedAt
		}
		return n.CreatedAt
	}
	// Oldest first by the field, then by id; desc (GitLab's default) is the
	// reverse. The notes are kept in creation order, so a listing of many
	// notes (30,000, on every page) is seldom sorted again.
	order := func(x, y *Note) int {
		if c := by(x).Compare(by(y)); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	}
	if q.Get("sort") != "asc" {
		order = func(x, y *Note) int {
			if c := by(y).Compare(by(x)); c != 0 {
				return c
			}
			return cmp.Compare(y.ID, x.ID)
		}
	}
	if !slices.IsSortedFunc(all, order) {
		slices.SortFunc(all, order)
	}
	perPage, page := 20, 1
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		page = v
	}
	pages := max((len(all)+perPage-1)/perPage, 1)
	from := min((page-1)*perPage, len(all))
	to := min(from+perPage, len(all))
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(perPage))
	h.Set("X-Total", strconv.Itoa(len(all)))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Next-Page", "")
	h.Set("X-Prev-Page", "")
	var links []string
	link := func(p int, rel string) {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		qq := u.Query()
		qq.Set("page", strconv.Itoa(p))
		qq.Set("per_page", strconv.Itoa(perPage))
		u.RawQuery = qq.Encode()
		links = append(links, fmt.Sprintf(`<%s>; rel="%s"`, u.String(), rel))
	}
	if page > 1 {
		h.Set("X-Prev-Page", strconv.Itoa(page-1))
		link(page-1, "prev")
	}
	if page < pages {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
		link(page+1, "next")
	}
	link(1, "first")
	link(pages, "last")
	h.Set("Link", strings.Join(links, ", "))
	// The page is written one note at a time: a page of a hundred notes of
	// 1,000,000 characters is never held encoded whole.
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	_, _ = io.WriteString(w, "[")
	for i, n := range all[from:to] {
		if i > 0 {
			_, _ = io.WriteString(w, ",")
		}
		_ = enc.Encode(s.json(n))
	}
	_, _ = io.WriteString(w, "]\n")
}

// artifact serves a file of a job of the latest successful pipeline of a ref.
func (s *Server) artifact(w http.ResponseWriter, r *http.Request, m []string) {
	if !s.project(m[1]) {
		s.message(w, http.StatusNotFound, "404 Project Not Found")
		return
	}
	ref, _ := url.PathUnescape(m[2])
	path, _ := url.PathUnescape(m[3])
	job := r.URL.Query().Get("job")
	for i := len(s.pipelines) - 1; i >= 0; i-- {
		p := s.pipelines[i]
		if p.Ref != ref || p.Status != "success" {
			continue
		}
		data, ok := p.Files[job][path]
		if !ok {
			break // the latest successful pipeline is the only one looked at
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(data)
		return
	}
	s.message(w, http.StatusNotFound, "404 Not Found")
}

func (s *Server) json(n *Note) map[string]any {
	return map[string]any{
		"id": n.ID, "body": n.Body, "system": n.System, "noteable_type": "MergeRequest", "noteable_iid": n.MR, //nolint:misspell // GitLab's field names

		"author":     map[string]any{"id": s.userID(n.Author), "username": n.Author, "name": n.Author},
		"created_at": n.CreatedAt.Format(time.RFC3339Nano), "updated_at": n.UpdatedAt.Format(time.RFC3339Nano),
	}
}

func (s *Server) message(w http.ResponseWriter, status int, msg string) {
	s.write(w, status, map[string]string{"message": msg})
}

func (s *Server) write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
