package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v62/github"
)

// Marker is the hidden first line that identifies the comment of one gate.
func Marker(key string) string {
	return "<!-- retrieval-gate:" + key + " -->"
}

// Comment is the sticky comment after an upsert.
type Comment struct {
	ID      int64
	URL     string // html_url
	Created bool   // false: an existing comment was updated in place
}

// Commenter keeps one comment per marker on a pull request: it updates the comment
// whose body starts with marker, or creates it.
type Commenter interface {
	Upsert(ctx context.Context, pr int, marker, body string) (Comment, error)
}

// ErrorKind classifies a failed API call for the message the user sees.
type ErrorKind int

const (
	KindOther        ErrorKind = iota
	KindForbidden              // 403 that is not a rate limit: the token may not write here
	KindNotFound               // 404: no such PR, or the token cannot see the repository
	KindUnauthorized           // 401: bad or expired token
	KindRateLimited            // rate limit still exhausted after the bounded waits
	KindServer                 // 5xx after the bounded retries
	KindNetwork                // no HTTP answer at all
)

// APIError is a failed comment call.
type APIError struct {
	Op      string // "list", "create", "update"
	Kind    ErrorKind
	Status  int    // HTTP status, 0 for network errors
	Message string // GitHub's message, or the network error
	Reset   time.Time
}

func (e *APIError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("failed to %s the PR comment: %s", e.Op, e.Message)
	}
	return fmt.Sprintf("failed to %s the PR comment: GitHub answered %d %s", e.Op, e.Status, e.Message)
}

// Client is the go-github implementation of Commenter.
type Client struct {
	gh          *gogithub.Client
	owner, repo string
	retry       *retryPolicy
}

// Option configures a Client.
type Option func(*clientConfig)

type clientConfig struct {
	httpClient *http.Client
	policy     retryPolicy
}

// WithHTTPClient sets the underlying HTTP client (its transport is wrapped by the
// retry logic).
func WithHTTPClient(c *http.Client) Option { return func(cc *clientConfig) { cc.httpClient = c } }

// WithSleep replaces the wait between retries (tests use one that does not sleep).
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(cc *clientConfig) { cc.policy.sleep = sleep }
}

// WithClock replaces time.Now for reading X-RateLimit-Reset.
func WithClock(now func() time.Time) Option { return func(cc *clientConfig) { cc.policy.now = now } }

// WithAttempts sets how many times one request is tried in all (at least 1).
func WithAttempts(n int) Option {
	return func(cc *clientConfig) {
		if n < 1 {
			n = 1
		}
		cc.policy.attempts = n
	}
}

// NewClient returns a Commenter for repository ("owner/name") at the API base
// apiURL (GITHUB_API_URL: https://api.github.com, or https://HOST/api/v3 on GitHub
// Enterprise Server). The token is only ever put in the Authorization header.
func NewClient(apiURL, repository, token string, opts ...Option) (*Client, error) {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", repository)
	}
	cc := clientConfig{policy: defaultPolicy()}
	for _, o := range opts {
		o(&cc)
	}
	base := http.DefaultTransport
	if cc.httpClient != nil && cc.httpClient.Transport != nil {
		base = cc.httpClient.Transport
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	if cc.httpClient != nil {
		*hc = *cc.httpClient
	}
	policy := cc.policy
	hc.Transport = &retryTransport{base: base, policy: &policy}
	gh := gogithub.NewClient(hc)
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not an http(s) URL", apiURL)
	}
	if strings.TrimSuffix(apiURL, "/") != DefaultAPIURL {
		upload := *u
		upload.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3") + "/api/uploads/"
		gh, err = gh.WithEnterpriseURLs(apiURL, upload.String())
		if err != nil {
			return nil, fmt.Errorf("GITHUB_API_URL %q: %w", apiURL, err)
		}
	}
	if token != "" {
		gh = gh.WithAuthToken(token)
	}
	gh.UserAgent = "retrieval-gate"
	return &Client{gh: gh, owner: owner, repo: repo, retry: &policy}, nil
}

// maxPages bounds the comment listing (100 per page).
const maxPages = 300

// Upsert updates the PR's comment whose body starts with marker, or creates one.
// A create that fails with a 5xx may have succeeded on GitHub's side, so it is
// retried only after listing again.
func (c *Client) Upsert(ctx context.Context, pr int, marker, body string) (Comment, error) {
	var last error
	for attempt := 1; attempt <= c.retry.attempts; attempt++ {
		if attempt > 1 {
			if err := c.retry.sleep(ctx, c.retry.backoff(attempt-1)); err != nil {
				return Comment{}, &APIError{Op: "create", Kind: KindNetwork, Message: err.Error()}
			}
		}
		existing, err := c.find(ctx, pr, marker)
		if err != nil {
			return Comment{}, classify("list", err)
		}
		if existing != nil {
			ic, _, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, existing.GetID(), &gogithub.IssueComment{Body: gogithub.String(body)})
			if err != nil {
				return Comment{}, classify("update", err)
			}
			return Comment{ID: ic.GetID(), URL: ic.GetHTMLURL()}, nil
		}
		ic, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, pr, &gogithub.IssueComment{Body: gogithub.String(body)})
		if err == nil {
			return Comment{ID: ic.GetID(), URL: ic.GetHTMLURL(), Created: true}, nil
		}
		ae := classify("create", err)
		if ae.Kind != KindServer {
			return Comment{}, ae
		}
		last = ae
	}
	return Comment{}, last
}

// find returns the first (oldest) comment whose body starts with marker.
func (c *Client) find(ctx context.Context, pr int, marker string) (*gogithub.IssueComment, error) {
	opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	for page := 0; page < maxPages; page++ {
		comments, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, pr, opts)
		if err != nil {
			return nil, err
		}
		for _, cm := range comments {
			if strings.HasPrefix(strings.TrimLeft(cm.GetBody(), " \t\r\n"), marker) {
				return cm, nil
			}
		}
		if resp.NextPage == 0 || resp.NextPage == opts.Page {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, nil
}

// classify turns a go-github error into an *APIError.
func classify(op string, err error) *APIError {
	var rle *gogithub.RateLimitError
	var abuse *gogithub.AbuseRateLimitError
	var er *gogithub.ErrorResponse
	switch {
	case errors.As(err, &rle):
		return &APIError{Op: op, Kind: KindRateLimited, Status: statusOf(rle.Response), Message: rle.Message, Reset: rle.Rate.Reset.Time}
	case errors.As(err, &abuse):
		ae := &APIError{Op: op, Kind: KindRateLimited, Status: statusOf(abuse.Response), Message: abuse.Message}
		if abuse.RetryAfter != nil {
			ae.Reset = time.Now().Add(*abuse.RetryAfter)
		}
		return ae
	case errors.As(err, &er):
		st := statusOf(er.Response)
		ae := &APIError{Op: op, Status: st, Message: er.Message}
		if ae.Message == "" {
			ae.Message = http.StatusText(st)
		}
		switch {
		case st == http.StatusTooManyRequests:
			ae.Kind = KindRateLimited
		case st == http.StatusForbidden:
			ae.Kind = KindForbidden
		case st == http.StatusNotFound:
			ae.Kind = KindNotFound
		case st == http.StatusUnauthorized:
			ae.Kind = KindUnauthorized
		case st >= 500:
			ae.Kind = KindServer
		}
		return ae
	default:
		return &APIError{Op: op, Kind: KindNetwork, Message: err.Error()}
	}
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

// Explain is the warning a user reads when the comment could not be posted. It says
// why and what to do; the exit code is never affected.
func Explain(err error) string {
	const keep = "The report is in the job summary, and the exit code reflects only the gates."
	var ae *APIError
	if !errors.As(err, &ae) {
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. %s", err, keep)
	}
	switch ae.Kind {
	case KindForbidden, KindNotFound:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. The token may not write to this pull request: "+
			"on pull requests from forks GitHub gives the workflow a read-only token. %s "+
			"To get comments on fork PRs, post them from a separate workflow triggered by `workflow_run` "+
			"(README: \"Comments on pull requests from forks\"); for other PRs give the job `permissions: pull-requests: write`.", ae, keep)
	case KindUnauthorized:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. The token was rejected; check the `github-token` input. %s", ae, keep)
	case KindRateLimited:
		when := ""
		if !ae.Reset.IsZero() {
			when = " until " + ae.Reset.UTC().Format(time.RFC3339)
		}
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. GitHub's API rate limit is exhausted%s. %s", ae, when, keep)
	case KindServer:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v (after retries). GitHub may be having trouble; re-run the job later. %s", ae, keep)
	case KindNetwork:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. Check GITHUB_API_URL and the runner's network. %s", ae, keep)
	default:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. %s", ae, keep)
	}
}
