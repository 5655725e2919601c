package ghartifact

import (
	"encoding/json"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
)

// event is the part of a webhook payload that names the base branch.
type event struct {
	PullRequest *struct {
		Base struct {
			Ref string `json:"ref"`
		} `json:"base"`
	} `json:"pull_request"`
	MergeGroup *struct {
		BaseRef string `json:"base_ref"`
	} `json:"merge_group"`
	Repository *struct {
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
}

// baseBranch reads the branch the baseline must come from out of the event payload.
func baseBranch(path string) (string, *Unavailable) {
	if path == "" {
		return "", unavailable(NoContext, "the base branch is unknown: GITHUB_EVENT_PATH is unset (not running in GitHub Actions?)")
	}
	data, err := github.ReadEventFile(path)
	if err != nil {
		return "", unavailable(NoContext, "the base branch is unknown: the event payload could not be read")
	}
	return branchOf(data)
}

func branchOf(data []byte) (string, *Unavailable) {
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return "", unavailable(NoContext, "the base branch is unknown: the event payload is not valid JSON")
	}
	var b string
	switch {
	case ev.PullRequest != nil:
		b = ev.PullRequest.Base.Ref
	case ev.MergeGroup != nil:
		b = strings.TrimPrefix(ev.MergeGroup.BaseRef, "refs/heads/")
	case ev.Repository != nil:
		b = ev.Repository.DefaultBranch
	}
	b = strings.TrimSpace(b)
	if b == "" {
		return "", unavailable(NoContext, "the base branch is unknown: the event payload names no base branch and no default branch")
	}
	return b, nil
}
