package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// ActionsBot is the login of the comments the Actions workflow token writes.
const ActionsBot = "github-actions[bot]"

// IssueComment is a comment of a pull request as the REST API returns it.
type IssueComment struct {
	ID        int64
	NodeID    string // node_id, the GraphQL id (MinimizeComment)
	Login     string // user.login of the author
	Body      string
	URL       string // html_url
	CreatedAt time.Time
}

// ErrorKind classifies a failed API call for the message the user sees.
type ErrorKind int

const (
	KindOther        ErrorKind = iota
	KindForbidden              // 403 that is not a rate limit: the token may not write here
	KindNotFound               // 404: no such PR, or the token cannot see the repository
	KindUnauthorized           // 401: bad or expired token
	KindRateLimited            // rate limit still exhausted after the bounded waits, or beyond the budget
	KindServer                 // 5xx after the bounded retries
	KindNetwork                // no HTTP answer at all
)

// APIError is a failed comment or check-run call.
type APIError struct {
	Op      string // "list", "create", "update", "delete", "hide", "identify"
	Object  string // what the call was about; "" is the PR comment
	Service string // who answered; "" is GitHub (GitLab's notes use the same upsert)
	Kind    ErrorKind
	Status  int    // HTTP status, 0 for network errors
	Message string // GitHub's message, the rate-limit explanation, or the network error
}

func (e *APIError) Error() string {
	obj, svc := e.Object, e.Service
	if obj == "" {
		obj = "PR comment"
	}
	if svc == "" {
		svc = "GitHub"
	}
	if e.Status == 0 {
		return fmt.Sprintf("failed to %s the %s: %s", e.Op, obj, e.Message)
	}
	return fmt.Sprintf("failed to %s the %s: %s answered %d %s", e.Op, obj, svc, e.Status, e.Message)
}

// Client makes the issue-comment calls of the sticky PR comment through go-github,
// under the httpretry policy. The token is only ever put in the Authorization
// header of requests to the API's own origin.
type Client struct {
	gh          *gogithub.Client
	http        *http.Client // the same client, for GraphQL
	graphql     string       // GraphQLURL of the API base
	owner, repo string
}

// DefaultPolicy is the GitHub client's: 4 attempts, backoff from 500 ms, 30 s per
// request, 3 minutes in all (a Retry-After: 45 fits; a reset an hour away does not
// and gives up at once); a POST that failed with 5xx is not re-sent blindly.
// A rate limit (a 403 or 429 with GitHub's rate-limit headers or its
// secondary-rate-limit message, or any 429) is waited for by GitHub's rules
// ("Rate limits for the REST API", "Exceeding the rate limit"; "Best practices
// for using the REST API", "Handle rate limit errors appropriately"): the
// Retry-After's seconds; else, with X-RateLimit-Remaining 0, until
// X-RateLimit-Reset; else at least a minute, doubling with each repeat (1, 2,
// then 4 minutes, each with up to a quarter more of jitter), which the budget
// ends: the second such wait does not fit the 3 minutes, and the request gives
// up saying so (the baseline artifact's and the history branch's clients,
// with their longer budgets, wait more of them).
var DefaultPolicy = httpretry.Policy{Attempts: 4, BaseDelay: 500 * time.Millisecond, MaxDelay: 8 * time.Second,
	RateLimitBase: time.Minute, RateLimitMax: 4 * time.Minute, RateLimitFloor: true,
	Timeout: 30 * time.Second, Budget: 3 * time.Minute, NonIdempotentPOST: true}

// Endpoints are where the API answers: REST is GITHUB_API_URL
// (https://api.github.com, DefaultAPIURL when ""; https://HOST/api/v3 on GitHub
// Enterprise Server), GraphQL is GITHUB_GRAPHQL_URL, which the runner sets (""
// is GraphQLURL(REST); when given it must be on REST's origin, the only one the
// token is sent to).
type Endpoints struct {
	REST, GraphQL string
}

// NewClient returns a client for repository ("owner/name") at the API base apiURL
// (GITHUB_API_URL: https://api.github.com, or https://HOST/api/v3 on GitHub
// Enterprise Server), its GraphQL endpoint GraphQLURL(apiURL), retrying under
// policy (DefaultPolicy; tests pass one whose Sleep records the waits).
func NewClient(apiURL, repository, token string, policy httpretry.Policy) (*Client, error) {
	return NewClientAt(Endpoints{REST: apiURL}, repository, token, policy)
}

// NewClientAt is NewClient at the endpoints api.
func NewClientAt(api Endpoints, repository, token string, policy httpretry.Policy) (*Client, error) {
	owner, repo, ok := strings.Cut(repository, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", repository)
	}
	apiURL := api.REST
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not an http(s) URL", apiURL)
	}
	t := &httpretry.Transport{Policy: policy, Origin: httpretry.Origin(apiURL), Secrets: []string{token}, MaxBody: maxAnswer}
	if token != "" {
		t.Credentials = http.Header{"Authorization": {"Bearer " + token}}
	}
	graphql, err := graphQLEndpoint(apiURL, api.GraphQL)
	if err != nil {
		return nil, err
	}
	hc := httpretry.NewHTTPClient(t)
	gh := gogithub.NewClient(hc)
	if strings.TrimSuffix(apiURL, "/") != DefaultAPIURL {
		upload := *u
		upload.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3") + "/api/uploads/"
		gh, err = gh.WithEnterpriseURLs(apiURL, upload.String())
		if err != nil {
			return nil, fmt.Errorf("GITHUB_API_URL %q: %w", apiURL, err)
		}
	}
	gh.UserAgent = "retrieval-gate"
	return &Client{gh: gh, http: hc, graphql: graphql, owner: owner, repo: repo}, nil
}

// Identity is the token's login, with which the sticky comment finds its own
// comments (a comment's user.login).
type Identity struct {
	Login string
	// Assumed is why Login is ActionsBot by assumption, not by GitHub's word:
	// GET /user was refused and GraphQL's viewer did not answer (its error).
	// nil when GitHub named the login.
	Assumed error
}

// Self is the token's identity: GET /user for a user's token. An installation
// token (the Actions workflow token, a GitHub App's token) may not read /user
// (403 "Resource not accessible by integration"; 401 and 404 are taken the same
// way), and is then asked of GraphQL's viewer (Viewer), which names it:
// github-actions[bot] for the workflow token, <app-slug>[bot] for an App's.
// When the viewer does not answer either (an errors array, a refusal, a server
// or network failure after the retries: the query is re-sent as a GET is,
// httpretry.WithSafeRetry), the identity is assumed to be
// ActionsBot with Assumed saying why; but after a 401 of both, the token is
// rejected, and that is the error. Other failures of GET /user (5xx after the
// retries, a rate limit, the network) are the error.
func (c *Client) Self(ctx context.Context) (Identity, error) {
	u, _, err := c.gh.Users.Get(ctx, "")
	if err == nil && u.GetLogin() != "" {
		return Identity{Login: u.GetLogin()}, nil
	}
	var rest *APIError
	if err != nil {
		rest = classify("identify", err)
		rest.Object = "token's user"
		if rest.Kind != KindForbidden && rest.Kind != KindNotFound && rest.Kind != KindUnauthorized {
			return Identity{}, rest
		}
	}
	login, err := c.Viewer(ctx)
	if err == nil {
		return Identity{Login: login}, nil
	}
	var ae *APIError
	switch {
	case ctx.Err() != nil:
		return Identity{}, err
	case rest != nil && rest.Kind == KindUnauthorized && errors.As(err, &ae) && ae.Kind == KindUnauthorized:
		return Identity{}, rest
	}
	return Identity{Login: ActionsBot, Assumed: err}, nil
}

// validLogin is a GitHub login as --comment-author takes it: a user's (1-39
// letters, digits and hyphens, not starting with one; an Enterprise Managed
// User's followed by _SHORTCODE), or an app's bot, <app-slug>[bot].
var validLogin = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(?:_[A-Za-z0-9]{1,39}|\[bot\])?$`)

// ValidLogin reports whether s has the form of a GitHub login (validLogin).
func ValidLogin(s string) bool { return validLogin.MatchString(s) }

// maxPages bounds the comment listing: 300 pages of 100 comments, the largest
// page GitHub serves (REST API documentation, "Using pagination in the REST
// API": per_page at most 100), so the oldest 30,000 comments. A variable so
// that a test can lower it.
var maxPages = 300

// IncompleteError is ListComments' error when the listing stopped at its bound
// with more comments left: the comments returned with it are the oldest Read.
// The sticky comment's upsert still updates one found among them, and posts no
// new one when none is (it could duplicate one further on).
type IncompleteError struct {
	Object  string // what was listed: "PR comments", "MR notes"
	Read    int    // how many were read, oldest first
	Pages   int    // the pages read
	PerPage int
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("there are more %s than the %d read (the first %d pages of %d, oldest first)", e.Object, e.Read, e.Pages, e.PerPage)
}

// The answers of the GitHub API are bounded (httpretry's bounded reader): one
// comment is at most 65,536 characters (GitHub's limit), at most 6 bytes each
// in JSON (\u00XX), plus its metadata, so maxCommentAnswer; an answer that is
// one comment, the token's user or a GraphQL answer is at most maxAnswer, a
// page of the listing at most 100 comments; the listing keeps the body of a
// comment only when it starts with retrieval-gate's marker (the others are
// never edited nor compared), at most maxKeptBodies of them in all.
const (
	maxCommentAnswer = 65536*6 + 64<<10
	maxAnswer        = 1 << 20
	maxListPage      = 100 * maxCommentAnswer
	maxKeptBodies    = 64 << 20
)

// ListComments returns every comment of the pull request, oldest first; a
// comment whose body does not start with retrieval-gate's marker
// (format.CommentMarkerPrefix) is returned without its body. Past maxPages
// pages it returns the comments read with an *IncompleteError.
func (c *Client) ListComments(ctx context.Context, pr int) ([]IssueComment, error) {
	opts := &gogithub.IssueListCommentsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	var out []IssueComment
	kept := 0
	pctx := httpretry.WithMaxValues(httpretry.WithMaxBody(ctx, maxListPage), httpretry.MaxPageValues)
	for page := 0; page < maxPages; page++ {
		comments, resp, err := c.gh.Issues.ListComments(pctx, c.owner, c.repo, pr, opts)
		if err != nil {
			return nil, classify("list", err)
		}
		for _, cm := range comments {
			ic := issueComment(cm)
			if !strings.HasPrefix(strings.TrimLeft(ic.Body, " \t\r\n"), format.CommentMarkerPrefix) {
				ic.Body = ""
			}
			if kept += len(ic.Body); kept > maxKeptBodies {
				return nil, &APIError{Op: "list", Kind: KindOther, Message: fmt.Sprintf("the pull request's comments that start with retrieval-gate's marker hold more than %d MiB: not read further", maxKeptBodies>>20)}
			}
			out = append(out, ic)
		}
		if resp.NextPage == 0 || resp.NextPage == opts.Page {
			return out, nil
		}
		if page+1 >= maxPages {
			return out, &IncompleteError{Object: "PR comments", Read: len(out), Pages: page + 1, PerPage: opts.PerPage}
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// CreateComment posts a new comment on the pull request.
func (c *Client) CreateComment(ctx context.Context, pr int, body string) (IssueComment, error) {
	ic, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, pr, &gogithub.IssueComment{Body: gogithub.String(body)})
	if err != nil {
		return IssueComment{}, classify("create", err)
	}
	return issueComment(ic), nil
}

// EditComment replaces a comment's body.
func (c *Client) EditComment(ctx context.Context, id int64, body string) (IssueComment, error) {
	ic, _, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, id, &gogithub.IssueComment{Body: gogithub.String(body)})
	if err != nil {
		return IssueComment{}, classify("update", err)
	}
	return issueComment(ic), nil
}

// DeleteComment deletes a comment.
func (c *Client) DeleteComment(ctx context.Context, id int64) error {
	if _, err := c.gh.Issues.DeleteComment(ctx, c.owner, c.repo, id); err != nil {
		return classify("delete", err)
	}
	return nil
}

func issueComment(ic *gogithub.IssueComment) IssueComment {
	return IssueComment{ID: ic.GetID(), NodeID: ic.GetNodeID(), Login: ic.GetUser().GetLogin(), Body: ic.GetBody(), URL: ic.GetHTMLURL(), CreatedAt: ic.GetCreatedAt().Time}
}

// classifyAs is classify for a call about object (the check run).
func classifyAs(op, object string, err error) *APIError {
	ae := classify(op, err)
	ae.Object = object
	return ae
}

// classify turns a go-github error into an *APIError.
func classify(op string, err error) *APIError {
	var rl *httpretry.RateLimitError
	var rle *gogithub.RateLimitError
	var abuse *gogithub.AbuseRateLimitError
	var er *gogithub.ErrorResponse
	switch {
	case errors.As(err, &rl):
		return &APIError{Op: op, Kind: KindRateLimited, Status: rl.Status, Message: rl.Why}
	case errors.As(err, &rle):
		return &APIError{Op: op, Kind: KindRateLimited, Status: statusOf(rle.Response), Message: rle.Message}
	case errors.As(err, &abuse):
		return &APIError{Op: op, Kind: KindRateLimited, Status: statusOf(abuse.Response), Message: abuse.Message}
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
		msg := err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			msg = ue.Err.Error()
		}
		return &APIError{Op: op, Kind: KindNetwork, Message: msg}
	}
}

func statusOf(r *http.Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}

// ForkCommentsDocs is where the workflow that comments on fork pull requests is
// described: the notices and warnings about a read-only token point there.
const ForkCommentsDocs = "https://github.com/retrieval-gate/retrieval-gate/blob/main/docs/action.md#comments-on-pull-requests-from-forks"

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
			"(see "+ForkCommentsDocs+"); for other PRs give the job `permissions: pull-requests: write`.", ae, keep)
	case KindUnauthorized:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. The token was rejected; check the `github-token` input. %s", ae, keep)
	case KindRateLimited:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. GitHub's API rate limit is exhausted. %s", ae, keep)
	case KindServer:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v (after retries). GitHub may be having trouble; re-run the job later. %s", ae, keep)
	case KindNetwork:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. Check GITHUB_API_URL and the runner's network. %s", ae, keep)
	default:
		return fmt.Sprintf("retrieval-gate could not post the PR comment: %v. %s", ae, keep)
	}
}
