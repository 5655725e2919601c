package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// GraphQLURL is the GraphQL endpoint next to the REST base apiURL, resolved as
// the REST calls resolve apiURL (go-github's WithEnterpriseURLs): on github.com
// https://api.github.com/graphql; a base that is GitHub Enterprise Server's
// (https://HOST/api/v3, or a bare https://HOST, whose REST calls go to
// /api/v3) https://HOST/api/graphql ("Forming calls with GraphQL": GHES's
// endpoint is http(s)://HOST/api/graphql); a host that starts with "api." or
// holds ".api." (GHE.com, https://api.SUBDOMAIN.ghe.com), whose REST base is
// used as given, /graphql appended to its path.
func GraphQLURL(apiURL string) (string, error) {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("GITHUB_API_URL %q is not an http(s) URL", OneLine(httpretry.RedactURL(apiURL)))
	}
	p := strings.TrimSuffix(u.Path, "/")
	if base, ok := strings.CutSuffix(p, "/api/v3"); ok {
		p = base + "/api/graphql"
	} else if strings.TrimSuffix(apiURL, "/") != DefaultAPIURL && !strings.HasPrefix(u.Host, "api.") && !strings.Contains(u.Host, ".api.") {
		p += "/api/graphql" // the REST calls go to p + /api/v3
	} else {
		p += "/graphql"
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = p, "", "", ""
	return u.String(), nil
}

// graphQLEndpoint is the GraphQL endpoint of a client whose REST base is
// apiURL: GITHUB_GRAPHQL_URL (override, which the runner sets) when given,
// else GraphQLURL(apiURL). The override must be an http(s) URL on apiURL's
// origin: the token is sent to that origin only.
func graphQLEndpoint(apiURL, override string) (string, error) {
	derived, err := GraphQLURL(apiURL)
	if err != nil || strings.TrimSpace(override) == "" {
		return derived, err
	}
	raw := strings.TrimSpace(override)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("GITHUB_GRAPHQL_URL %q is not an http(s) URL", OneLine(httpretry.RedactURL(raw)))
	}
	if got, want := httpretry.Origin(raw), httpretry.Origin(derived); got != want {
		return "", fmt.Errorf("GITHUB_GRAPHQL_URL %q is not on the origin of GITHUB_API_URL (%s), the only one the token is sent to", OneLine(httpretry.RedactURL(raw)), want)
	}
	return raw, nil
}

// minimizeMutation hides a comment as outdated. GitHub's schema:
// minimizeComment(input: MinimizeCommentInput!): MinimizeCommentPayload, with
// input {subjectId: ID!, classifier: ReportedContentClassifiers!}.
const minimizeMutation = `mutation($id: ID!) {
  minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) {
    minimizedComment { isMinimized minimizedReason }
  }
}`

// graphQLError is one entry of a GraphQL response's errors array. GitHub answers
// 200 with errors for refused mutations (type FORBIDDEN, NOT_FOUND, ...).
type graphQLError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// postGraphQL sends query (with variables, when not nil) to the GraphQL
// endpoint and decodes the answer's data into data. A refusal is an *APIError
// with op: a non-2xx status by its status (KindUnauthorized for 401,
// KindForbidden for 403, ...), a 200 with an errors array by the first
// error's type (FORBIDDEN, NOT_FOUND, RATE_LIMITED; KindOther for the rest,
// a query GitHub does not know among them), a malformed answer KindOther.
func (c *Client) postGraphQL(ctx context.Context, op, query string, variables map[string]string, data any) error {
	in := map[string]any{"query": query}
	if variables != nil {
		in["variables"] = variables
	}
	body, err := json.Marshal(in)
	if err != nil {
		return &APIError{Op: op, Message: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.graphql, bytes.NewReader(body))
	if err != nil {
		return &APIError{Op: op, Kind: KindNetwork, Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "retrieval-gate")
	resp, err := c.http.Do(req)
	if err != nil {
		return classify(op, err)
	}
	defer resp.Body.Close()
	raw, err := httpretry.ReadAnswer(ctx, resp.Body, resp.ContentLength, maxAnswer, c.graphql)
	if err != nil {
		return &APIError{Op: op, Kind: KindNetwork, Status: resp.StatusCode, Message: err.Error()}
	}
	var out struct {
		Data    json.RawMessage `json:"data"`
		Errors  []graphQLError  `json:"errors"`
		Message string          `json:"message"` // non-2xx answers: {"message": ...}
	}
	jsonErr := httpretry.UnmarshalAnswer(raw, &out)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ae := &APIError{Op: op, Status: resp.StatusCode, Message: out.Message}
		if ae.Message == "" {
			ae.Message = http.StatusText(resp.StatusCode)
		}
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			ae.Kind = KindUnauthorized
		case resp.StatusCode == http.StatusForbidden:
			ae.Kind = KindForbidden
		case resp.StatusCode == http.StatusNotFound:
			ae.Kind = KindNotFound
		case resp.StatusCode == http.StatusTooManyRequests:
			ae.Kind = KindRateLimited
		case resp.StatusCode >= 500:
			ae.Kind = KindServer
		}
		return ae
	}
	if jsonErr != nil {
		return &APIError{Op: op, Status: resp.StatusCode, Message: "malformed GraphQL answer: " + jsonErr.Error()}
	}
	if len(out.Errors) > 0 {
		e := out.Errors[0]
		ae := &APIError{Op: op, Status: resp.StatusCode, Message: strings.TrimSpace(e.Type + " " + e.Message)}
		switch e.Type {
		case "FORBIDDEN":
			ae.Kind = KindForbidden
		case "NOT_FOUND":
			ae.Kind = KindNotFound
		case "RATE_LIMITED":
			ae.Kind = KindRateLimited
		}
		return ae
	}
	if len(out.Data) > 0 {
		if err := httpretry.UnmarshalAnswer(out.Data, data); err != nil {
			return &APIError{Op: op, Status: resp.StatusCode, Message: "malformed GraphQL answer: " + err.Error()}
		}
	}
	return nil
}

// MinimizeComment hides the comment with GraphQL node id nodeID as outdated
// (minimizeComment, classifier OUTDATED) through POST {GraphQLURL}. A refusal
// (errors array, non-2xx status) is an *APIError with op "hide": KindForbidden for
// FORBIDDEN (or 401/403), KindNotFound for NOT_FOUND, and so on.
func (c *Client) MinimizeComment(ctx context.Context, nodeID string) error {
	if nodeID == "" {
		return &APIError{Op: "hide", Kind: KindNotFound, Message: "the comment has no node_id"}
	}
	var data struct {
		MinimizeComment *struct {
			MinimizedComment *struct {
				IsMinimized bool `json:"isMinimized"`
			} `json:"minimizedComment"`
		} `json:"minimizeComment"`
	}
	if err := c.postGraphQL(ctx, "hide", minimizeMutation, map[string]string{"id": nodeID}, &data); err != nil {
		return err
	}
	if m := data.MinimizeComment; m == nil || m.MinimizedComment == nil || !m.MinimizedComment.IsMinimized {
		return &APIError{Op: "hide", Status: http.StatusOK, Message: "GitHub did not report the comment as minimized"}
	}
	return nil
}

// viewerQuery asks GraphQL for the token's login ("Forming calls with
// GraphQL": the viewer is the user the token authenticates as; an
// installation token's is its app's bot, <app-slug>[bot], the Actions
// workflow token's github-actions[bot]).
const viewerQuery = "query { viewer { login } }"

// viewerObject is what a failed Viewer call was about, in its error.
const viewerObject = "token's login (GraphQL viewer)"

// Viewer is the token's login as GraphQL's viewer names it. A refusal, an
// errors array (GitHub answers 200 with one) or an answer without a login is
// an *APIError with op "identify".
func (c *Client) Viewer(ctx context.Context) (string, error) {
	var data struct {
		Viewer *struct {
			Login string `json:"login"`
		} `json:"viewer"`
	}
	// The query reads and changes nothing: re-sent on a 5xx or a network
	// error, which the client's policy does not do for a POST.
	if err := c.postGraphQL(httpretry.WithSafeRetry(ctx), "identify", viewerQuery, nil, &data); err != nil {
		var ae *APIError
		if errors.As(err, &ae) {
			ae.Object = viewerObject
		}
		return "", err
	}
	if data.Viewer == nil || strings.TrimSpace(data.Viewer.Login) == "" {
		return "", &APIError{Op: "identify", Object: viewerObject, Status: http.StatusOK, Message: "the answer names no login"}
	}
	return data.Viewer.Login, nil
}
