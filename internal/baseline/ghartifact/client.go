package ghartifact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ciartifact"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// maxJSONBytes caps one API answer (a page of 100 artifacts is ~60 KB).
const maxJSONBytes = 8 << 20

// maxRedirects bounds the redirects of one request.
const maxRedirects = 5

type client struct {
	owner string
	repo  string
	http  *http.Client
	api   *url.URL
	token string
	now   func() time.Time
}

func newClient(d Deps, owner, repo string) (*client, *Unavailable) {
	api, err := url.Parse(strings.TrimRight(strings.TrimSpace(d.APIURL), "/"))
	if err != nil || (api.Scheme != "http" && api.Scheme != "https") || api.Host == "" {
		return nil, unavailable(ciartifact.NoContext, "the API URL %q is not an http(s) URL", github.OneLine(d.APIURL))
	}
	hc := httpretry.NewHTTPClient(&httpretry.Transport{Policy: Policy, Secrets: []string{d.Token}, MaxBody: maxJSONBytes})
	if d.HTTP != nil {
		cp := *d.HTTP
		hc = &cp
	}
	hc.CheckRedirect = redirectPolicy
	now := d.Now
	if now == nil {
		now = time.Now
	}
	return &client{owner: owner, repo: repo, http: hc, api: api, token: d.Token, now: now}, nil
}

// Policy is the retry policy of the default client: the GitHub client's, with a
// per-attempt timeout long enough to download a MaxArchiveBytes archive.
var Policy = func() httpretry.Policy {
	p := github.DefaultPolicy
	p.NonIdempotentPOST = false
	p.Timeout, p.Budget = 5*time.Minute, 12*time.Minute
	return p
}()

// sameOrigin reports whether a and b have the same scheme, host and port (the
// default port made explicit).
func sameOrigin(a, b *url.URL) bool {
	return httpretry.Origin(a.String()) == httpretry.Origin(b.String())
}

// redirectPolicy follows at most maxRedirects redirects, never from https to http;
// on any change of scheme, host or port from the first request or the previous hop
// it removes Authorization and every other credential header (httpretry's rule):
// the signed download URL on GitHub's storage host must not receive the API token.
// net/http alone would keep Authorization for another port of the same host.
func redirectPolicy(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	prev := via[len(via)-1]
	if prev.URL.Scheme == "https" && req.URL.Scheme != "https" {
		return errors.New("refused a redirect from https to http")
	}
	if err := httpretry.CheckRedirect(req, via); err != nil {
		return err
	}
	if !sameOrigin(via[0].URL, req.URL) || !sameOrigin(prev.URL, req.URL) {
		req.Header.Del("Authorization")
	}
	return nil
}

// get sends a GET to u with the API headers, and the token only when u is on the
// API's origin.
func (c *client) get(ctx context.Context, u *url.URL, accept string) (*http.Response, *Unavailable) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, unavailable(ciartifact.NoContext, "could not build a request for %s", redact(u))
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "retrieval-gate")
	if c.token != "" && sameOrigin(u, c.api) {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, networkError(ctx, u, err)
	}
	return resp, nil
}

// networkError describes a failed request without its URL's query (a signed URL
// carries its signature there) and without headers.
func networkError(ctx context.Context, u *url.URL, err error) *Unavailable {
	if ctx.Err() != nil {
		return unavailable(ciartifact.Network, "the baseline search was cancelled (%v)", ctx.Err())
	}
	var rl *httpretry.RateLimitError
	if errors.As(err, &rl) {
		return unavailable(ciartifact.RateLimited, "GitHub's API rate limit stopped the baseline search (HTTP %d): %s", rl.Status, github.OneLine(rl.Why))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		if p, perr := url.Parse(ue.URL); perr == nil {
			u = p // the request that failed may be a redirect's
		}
		err = ue.Err
	}
	msg := err.Error()
	if u.RawQuery != "" {
		msg = strings.ReplaceAll(msg, u.RawQuery, "…")
	}
	return unavailable(ciartifact.Network, "could not reach %s: %s", redact(u), github.OneLine(msg))
}

// redact is scheme://host/path, without query, fragment or user info.
func redact(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// apiError turns a non-2xx answer into an Unavailable; what names the request for
// the message ("list the artifacts", ...).
func (c *client) apiError(resp *http.Response, what string) *Unavailable {
	var body struct {
		Message string `json:"message"`
	}
	data, _ := httpretry.ReadSnippet(resp.Body, 1<<16)
	_ = json.Unmarshal(data, &body)
	gh := github.OneLine(body.Message)
	if gh == "" {
		gh = http.StatusText(resp.StatusCode)
	}
	st := resp.StatusCode
	switch {
	case (st == http.StatusForbidden || st == http.StatusTooManyRequests) && rateLimited(resp, body.Message):
		msg := fmt.Sprintf("GitHub's API rate limit stopped the request to %s (%d %s)", what, st, gh)
		if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			msg += "; it resets at " + time.Unix(reset, 0).UTC().Format("15:04 UTC")
		}
		return unavailable(ciartifact.RateLimited, "%s", msg)
	case st == http.StatusForbidden:
		return unavailable(ciartifact.Forbidden, "GitHub refused to %s (403 %s): give the job `permissions: actions: read`", what, gh)
	case st == http.StatusUnauthorized:
		return unavailable(ciartifact.Unauthorized, "GitHub refused the token to %s (401 %s)", what, gh)
	case st == http.StatusNotFound:
		return unavailable(ciartifact.NotFound, "GitHub found nothing to %s (404 %s): the repository or artifact is not visible to this token", what, gh)
	case st == http.StatusGone:
		return unavailable(ciartifact.Expired, "GitHub could not %s: it has expired (410 %s)", what, gh)
	case st >= 500:
		return unavailable(ciartifact.ServerError, "GitHub failed to %s (%d %s)", what, st, gh)
	}
	return unavailable(ciartifact.ServerError, "GitHub answered %d %s to %s", st, gh, what)
}

func rateLimited(resp *http.Response, msg string) bool {
	if resp.Header.Get("X-RateLimit-Remaining") == "0" || resp.Header.Get("Retry-After") != "" {
		return true
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "rate limit")
}

// getJSON decodes a 200 answer into v.
func (c *client) getJSON(ctx context.Context, u *url.URL, what string, v any) (http.Header, *Unavailable) {
	resp, u2 := c.get(ctx, u, "application/vnd.github+json")
	if u2 != nil {
		return nil, u2
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.apiError(resp, what)
	}
	data, err := httpretry.ReadAnswer(ctx, resp.Body, resp.ContentLength, maxJSONBytes, redact(u))
	if tl := (*httpretry.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, unavailable(ciartifact.TooLarge, "GitHub's answer to %s is over %d bytes", what, maxJSONBytes)
	}
	if err != nil {
		return nil, networkError(ctx, u, err)
	}
	if err := httpretry.UnmarshalAnswerCap(data, v, httpretry.MaxPageValues); err != nil { // a page of at most 100 artifacts, or one object
		return nil, unavailable(ciartifact.ServerError, "GitHub's answer to %s is not the expected JSON", what)
	}
	return resp.Header, nil
}

// artifact is an item of "List artifacts for a repository".
type artifact struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	SizeInBytes int64     `json:"size_in_bytes"`
	Expired     bool      `json:"expired"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	DownloadURL string    `json:"archive_download_url"`
	WorkflowRun *struct {
		ID               int64  `json:"id"`
		RepositoryID     int64  `json:"repository_id"`
		HeadRepositoryID int64  `json:"head_repository_id"`
		HeadBranch       string `json:"head_branch"`
		HeadSHA          string `json:"head_sha"`
	} `json:"workflow_run"`
}

// run is the part of "Get a workflow run" that decides eligibility.
type run struct {
	ID         int64   `json:"id"`
	Event      string  `json:"event"`
	Status     string  `json:"status"`
	Conclusion *string `json:"conclusion"`
	HeadBranch string  `json:"head_branch"`
}

var nextLink = regexp.MustCompile(`<([^>]+)>\s*;\s*rel="?next"?`)

func (c *client) endpoint(parts ...string) *url.URL {
	return c.api.JoinPath(append([]string{"repos", c.owner, c.repo, "actions"}, parts...)...)
}

// find returns the newest eligible artifact (see the package documentation).
func (c *client) find(ctx context.Context, name, branch string) (*candidate, *Unavailable) {
	u := c.endpoint("artifacts")
	q := url.Values{"name": {name}, "per_page": {"100"}}
	u.RawQuery = q.Encode()

	var all []artifact
	pages, truncated := 0, false
	for u != nil {
		if pages == MaxPages {
			truncated = true
			break
		}
		var page struct {
			TotalCount int        `json:"total_count"`
			Artifacts  []artifact `json:"artifacts"`
		}
		h, un := c.getJSON(ctx, u, "list the artifacts", &page)
		if un != nil {
			return nil, un
		}
		pages++
		all = append(all, page.Artifacts...)
		u = nil
		if m := nextLink.FindStringSubmatch(h.Get("Link")); m != nil {
			next, err := url.Parse(m[1])
			if err != nil || !sameOrigin(next, c.api) {
				return nil, unavailable(ciartifact.ServerError, "GitHub's artifact listing points its next page at another host")
			}
			u = next
		}
	}

	var (
		match                       []artifact
		otherBranch, fork, noRunRef int
	)
	for _, a := range all {
		switch {
		case a.Name != name:
			continue
		case a.WorkflowRun == nil:
			noRunRef++
		case a.WorkflowRun.HeadBranch != branch:
			otherBranch++
		case a.WorkflowRun.RepositoryID <= 0 || a.WorkflowRun.HeadRepositoryID != a.WorkflowRun.RepositoryID:
			// A run that does not say which repository built it is not known
			// to be this one's: passed over as a fork's.
			fork++
		default:
			match = append(match, a)
		}
	}
	slices.SortStableFunc(match, func(a, b artifact) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return compareInt(b.ID, a.ID)
	})
	if len(match) == 0 {
		msg := fmt.Sprintf("no artifact %q from branch %q", github.OneLine(name), github.OneLine(branch))
		var notes []string
		if otherBranch > 0 {
			notes = append(notes, fmt.Sprintf("%d from other branches", otherBranch))
		}
		if fork > 0 {
			notes = append(notes, fmt.Sprintf("%d from forks", fork))
		}
		if noRunRef > 0 {
			notes = append(notes, fmt.Sprintf("%d without a workflow run", noRunRef))
		}
		if len(notes) > 0 {
			msg += " (passed over: " + strings.Join(notes, ", ") + ")"
		}
		if truncated {
			msg += fmt.Sprintf(" among the newest %d pages of artifacts", MaxPages)
		}
		return nil, unavailable(ciartifact.NoArtifact, "%s: run the baseline workflow on a push to %q first", msg, github.OneLine(branch))
	}

	var skipped []string
	lookups, expired := 0, 0
	for _, a := range match {
		if a.Expired || (!a.ExpiresAt.IsZero() && !c.now().Before(a.ExpiresAt)) {
			expired++
			skipped = append(skipped, fmt.Sprintf("artifact %d of %s has expired", a.ID, a.CreatedAt.UTC().Format(time.RFC3339)))
			continue
		}
		if lookups == MaxRunLookups {
			break
		}
		lookups++
		var r run
		_, un := c.getJSON(ctx, c.endpoint("runs", strconv.FormatInt(a.WorkflowRun.ID, 10)), "read the workflow run", &r)
		if un != nil {
			if un.Reason == ciartifact.NotFound {
				skipped = append(skipped, fmt.Sprintf("artifact %d: its run %d is gone", a.ID, a.WorkflowRun.ID))
				continue
			}
			return nil, un
		}
		if why := ineligible(r, branch); why != "" {
			skipped = append(skipped, fmt.Sprintf("artifact %d: run %d %s", a.ID, r.ID, why))
			continue
		}
		return &candidate{a: a, skipped: skipped}, nil
	}
	if expired == len(match) {
		return nil, unavailable(ciartifact.Expired, "every artifact %q from branch %q has expired (the newest was uploaded %s): run the baseline workflow on %q again",
			github.OneLine(name), github.OneLine(branch), match[0].CreatedAt.UTC().Format("2006-01-02"), github.OneLine(branch))
	}
	msg := fmt.Sprintf("no artifact %q from a successful run on branch %q", github.OneLine(name), github.OneLine(branch))
	if len(skipped) > 0 {
		msg += ": " + github.OneLine(skipped[0])
		if len(skipped) > 1 {
			msg += fmt.Sprintf(" (and %d more passed over)", len(skipped)-1)
		}
	}
	return nil, unavailable(ciartifact.NoArtifact, "%s", msg)
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ineligible says why a run's artifact cannot be the baseline ("" when it can).
func ineligible(r run, branch string) string {
	switch {
	case r.Status != "completed":
		return fmt.Sprintf("has not completed (status %q)", github.OneLine(r.Status))
	case r.Conclusion == nil || *r.Conclusion != "success":
		c := "none"
		if r.Conclusion != nil {
			c = github.OneLine(*r.Conclusion)
		}
		return fmt.Sprintf("did not succeed (conclusion %s)", c)
	case !github.WriteEvent(r.Event):
		// The events whose runs may supply the baseline are those that may
		// write the history (github.WriteEvent, the one list).
		return fmt.Sprintf("ran for event %q: a baseline comes only from push, schedule, workflow_dispatch or repository_dispatch runs", github.OneLine(r.Event))
	case r.HeadBranch != branch:
		return fmt.Sprintf("ran on branch %q", github.OneLine(r.HeadBranch))
	}
	return ""
}

type candidate struct {
	a       artifact
	skipped []string
}
