package ghartifact

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
)

// Auto is --baseline auto: the artifact name fetched with the Actions
// environment getenv reads (GITHUB_API_URL, GITHUB_REPOSITORY,
// GITHUB_EVENT_PATH) and token; with none found, why not, as the comparison
// records it (outside Actions too: baseline.NotInActions).
func Auto(ctx context.Context, getenv func(string) string, token, name string) (*Found, *baseline.Unavailability) {
	if getenv("GITHUB_ACTIONS") != "true" {
		return nil, &baseline.Unavailability{Code: baseline.NotInActions}
	}
	api := strings.TrimSpace(getenv("GITHUB_API_URL"))
	if api == "" {
		api = github.DefaultAPIURL
	}
	found, u := Fetch(ctx, Deps{APIURL: api, Token: token, Repo: getenv("GITHUB_REPOSITORY"), EventPath: getenv("GITHUB_EVENT_PATH")}, name)
	if u != nil {
		return nil, &baseline.Unavailability{Code: string(u.Reason), Detail: u.Message}
	}
	return found, nil
}

// Source is the provenance of a found baseline as the comparison records it.
func (f *Found) Source() map[string]string {
	return map[string]string{
		"artifact_id": strconv.FormatInt(f.ArtifactID, 10), "run_id": strconv.FormatInt(f.RunID, 10),
		"head_sha": f.HeadSHA, "artifact_created_at": f.CreatedAt.UTC().Format(time.RFC3339),
	}
}
