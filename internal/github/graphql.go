package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// GraphQLURL is the GraphQL endpoint next to the REST base apiURL: on github.com
// https://api.github.com/graphql, on GitHub Enterprise Server (REST at
// https://HOST/api/v3) https://HOST/api/graphql. Any other base gets /graphql
// appended to its path.
func GraphQLURL(apiURL string) (string, error) {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("GITHUB_API_URL %q is not an http(s) URL", apiURL)
	}
	p := strings.TrimSuffix(u.Path, "/")
	if base, ok := strings.CutSuffix(p, "/api/v3"); ok {
		p = base + "/api/graphql"
	} else {
		p += "/graphql"
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = p, "", "", ""
	return u.String(), nil
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

// MinimizeComment hides the comment with GraphQL node id nodeID as outdated
// (minimizeComment, classifier OUTDATED) through POST {GraphQLURL}. A refusal
// (errors array, non-2xx status) is an *APIError with op "hide": KindForbidden for
// FORBIDDEN (or 401/403), KindNotFound for NOT_FOUND, and so on.
func (c *Client) MinimizeComment(ctx context.Context, nodeID string) error {
	if nodeID == "" {
		return &APIError{Op: "hide", Kind: KindNotFound, Message: "the comment has no node_id"}
	}
	body, err := json.Marshal(map[string]any{"query": minimizeMutation, "variables": map[string]string{"id": nodeID}})
	if err != nil {
		return &APIError{Op: "hide", Message: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.graphql, bytes.NewReader(body))
	if err != nil {
		return &APIError{Op: "hide", Kind: KindNetwork, Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "retrieval-gate")
	resp, err := c.http.Do(req)
	if err != nil {
		return classify("hide", err)
	}
	defer resp.Body.Close()
	data, err := httpretry.ReadAnswer(ctx, resp.Body, resp.ContentLength, maxAnswer, c.graphql)
	if err != nil {
		return &APIError{Op: "hide", Kind: KindNetwork, Status: resp.StatusCode, Message: err.Error()}
	}
	var out struct {
		Data struct {
			MinimizeComment *struct {
				MinimizedComment *struct {
					IsMinimized bool `json:"isMinimized"`
				} `json:"minimizedComment"`
			} `json:"minimizeComment"`
		} `json:"data"`
		Errors  []graphQLError `json:"errors"`
		Message string         `json:"message"` // non-2xx answers: {"message": ...}
	}
	jsonErr := httpretry.UnmarshalAnswer(data, &out)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ae := &APIError{Op: "hide", Status: resp.StatusCode, Message: out.Message}
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
		return &APIError{Op: "hide", Status: resp.StatusCode, Message: "malformed GraphQL answer: " + jsonErr.Error()}
	}
	if len(out.Errors) > 0 {
		e := out.Errors[0]
		ae := &APIError{Op: "hide", Status: resp.StatusCode, Message: strings.TrimSpace(e.Type + " " + e.Message)}
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
	if m := out.Data.MinimizeComment; m == nil || m.MinimizedComment == nil || !m.MinimizedComment.IsMinimized {
		return &APIError{Op: "hide", Status: resp.StatusCode, Message: "GitHub did not report the comment as minimized"}
	}
	return nil
}
