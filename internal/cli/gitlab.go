package cli

// The GitLab CI environment: the one place the CLI reads GitLab's predefined
// variables (and GITLAB_TOKEN), into a gitlab.CI value for the publisher of
// the merge-request note and for check's --baseline auto.

import (
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/gitlab"
)

// inGitLab reports whether the process runs in a GitLab CI job (and not in
// GitHub Actions, which wins when both are set).
func inGitLab(getenv func(string) string) bool {
	return getenv("GITLAB_CI") == "true" && getenv("GITHUB_ACTIONS") != "true"
}

// gitlabCI reads the job's predefined variables: CI_API_V4_URL (else
// CI_SERVER_URL/api/v4), CI_PROJECT_ID (else CI_PROJECT_PATH, which GitLab's
// REST API takes as :id too) and CI_PROJECT_URL (in a merge-request pipeline
// CI_MERGE_REQUEST_PROJECT_ID, else _PATH, and _URL, the merge request's
// project),
// CI_MERGE_REQUEST_IID (merge-request pipelines),
// CI_MERGE_REQUEST_TARGET_BRANCH_NAME, CI_DEFAULT_BRANCH, CI_JOB_URL,
// CI_JOB_TOKEN, and the access token GITLAB_TOKEN.
func gitlabCI(getenv func(string) string) gitlab.CI {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	c := gitlab.CI{
		InCI:          inGitLab(getenv),
		APIURL:        get("CI_API_V4_URL"),
		ProjectID:     get("CI_PROJECT_ID"),
		ProjectURL:    get("CI_PROJECT_URL"),
		TargetBranch:  get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"),
		DefaultBranch: get("CI_DEFAULT_BRANCH"),
		JobURL:        get("CI_JOB_URL"),
		Token:         get("GITLAB_TOKEN"),
		JobToken:      get("CI_JOB_TOKEN"),
	}
	// A merge request from a fork runs its pipeline in the fork (CI_PROJECT_ID),
	// but the merge request (its iid, its notes) and its target branch's
	// pipelines (a baseline) are the target project's:
	// CI_MERGE_REQUEST_PROJECT_ID and _URL, set in every merge-request pipeline.
	// A project is named by its id, else by its full path (group/project:
	// GitLab's REST API takes either as :id, "Namespaced paths"); the variable
	// it was read from is kept to be named.
	if c.ProjectID == "" && get("CI_PROJECT_PATH") != "" {
		c.ProjectID, c.ProjectIDVar = get("CI_PROJECT_PATH"), "CI_PROJECT_PATH"
	}
	mrProject, mrVar := get("CI_MERGE_REQUEST_PROJECT_ID"), "CI_MERGE_REQUEST_PROJECT_ID"
	if mrProject == "" {
		mrProject, mrVar = get("CI_MERGE_REQUEST_PROJECT_PATH"), "CI_MERGE_REQUEST_PROJECT_PATH"
	}
	if mrProject != "" {
		c.ProjectID, c.ProjectIDVar = mrProject, mrVar
		if u := get("CI_MERGE_REQUEST_PROJECT_URL"); u != "" {
			c.ProjectURL = u
		}
	}
	if c.APIURL == "" && get("CI_SERVER_URL") != "" {
		c.APIURL, c.APIURLVar = strings.TrimSuffix(get("CI_SERVER_URL"), "/")+"/api/v4", "CI_SERVER_URL"
	}
	// A set iid that is not one is kept to be named (the publisher says so),
	// never read as "not a merge-request pipeline".
	if v := get("CI_MERGE_REQUEST_IID"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			c.MRIID = n
		} else {
			c.BadMRIID = v
		}
	}
	return c
}
