// Package glartifact finds the baseline of `check --baseline auto` in a GitLab
// CI job, the GitLab twin of baseline/ghartifact: the baseline file
// (baseline.jsonl.gz) that the job named by --baseline-artifact (default
// retrieval-gate-baseline-<comment-key>) kept as an artifact on the latest
// successful pipeline of the merge request's target branch
// (CI_MERGE_REQUEST_TARGET_BRANCH_NAME), else of the default branch
// (CI_DEFAULT_BRANCH). It is fetched with GitLab's "Download a single artifact
// file from the latest successful pipeline of a ref" (GET
// /projects/:id/jobs/artifacts/:ref_name/raw/baseline.jsonl.gz?job=NAME),
// authenticated by GITLAB_TOKEN, else by CI_JOB_TOKEN (which GitLab accepts on
// the job-artifacts endpoints), written to a temporary file of at most
// ciartifact.MaxFileBytes and verified as ghartifact verifies its own
// (ciartifact.VerifyFile: gzip, the schema, the whole stream). Anything that
// prevents a baseline is a baseline.Unavailability with the reason codes both
// adapters share (ciartifact.Reason), never an error.
package glartifact

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ciartifact"
	"github.com/retrieval-gate/retrieval-gate/internal/gitlab"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// Found is a verified baseline file on disk.
type Found struct {
	Path, Job, Ref, Schema string
	dir                    string
}

// Source is the provenance of the baseline as the comparison records it.
func (f *Found) Source() map[string]string {
	return map[string]string{"gitlab_job": f.Job, "gitlab_ref": f.Ref}
}

// Cleanup removes the file and its directory.
func (f *Found) Cleanup() error {
	err := os.Remove(f.Path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Remove(f.dir); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Auto fetches the baseline of job name for ci under policy (the zero policy
// is gitlab.DefaultPolicy's with 5 minutes per attempt for the download).
func Auto(ctx context.Context, ci gitlab.CI, name string, policy httpretry.Policy) (*Found, *baseline.Unavailability) {
	f, u := auto(ctx, ci, name, policy)
	if u != nil {
		u.Detail = httpretry.RedactText(u.Detail, ci.Token, ci.JobToken)
	}
	return f, u
}

func unavailable(r ciartifact.Reason, format string, args ...any) *baseline.Unavailability {
	return &baseline.Unavailability{Code: string(r), Detail: fmt.Sprintf(format, args...)}
}

func auto(ctx context.Context, ci gitlab.CI, name string, policy httpretry.Policy) (*Found, *baseline.Unavailability) {
	ref := ci.BaseRef()
	// The variable that is missing or wrong, by the name it was read from.
	if err := ci.Problem(); err != nil {
		return nil, unavailable(ciartifact.NoContext, "the project is unknown: %v", err)
	}
	switch {
	case ref == "":
		return nil, unavailable(ciartifact.NoContext, "the base branch is unknown (neither CI_MERGE_REQUEST_TARGET_BRANCH_NAME nor CI_DEFAULT_BRANCH is set)")
	}
	token, job := ci.Token, false
	if token == "" {
		token, job = ci.JobToken, true
	}
	if policy.Attempts == 0 {
		policy = gitlab.DefaultPolicy
		policy.Timeout = 5 * time.Minute // a download of up to 256 MiB
		policy.Budget = 10 * time.Minute
	}
	c, err := gitlab.NewClient(ci.APIURL, ci.ProjectID, token, job, policy)
	if err != nil {
		return nil, unavailable(ciartifact.NoContext, "%v", err)
	}
	dir, err := os.MkdirTemp("", "retrieval-gate-baseline-")
	if err != nil {
		return nil, unavailable(ciartifact.LocalIO, "could not make a directory for the baseline: %v", err)
	}
	path := filepath.Join(dir, ciartifact.FileName)
	f := &Found{Path: path, Job: name, Ref: ref, dir: dir}
	out, err := os.Create(path)
	if err != nil {
		_ = f.Cleanup()
		return nil, unavailable(ciartifact.LocalIO, "could not write the baseline: %v", err)
	}
	err = c.RawArtifact(ctx, ref, name, ciartifact.FileName, ciartifact.MaxFileBytes, out)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		_ = f.Cleanup()
		return nil, fromError(err, name, ref)
	}
	schema, u := ciartifact.VerifyFile(ctx, path, fmt.Sprintf("the %s of job %s on %s", ciartifact.FileName, name, ref), ciartifact.DefaultLimits)
	if u != nil {
		_ = f.Cleanup()
		return nil, &baseline.Unavailability{Code: string(u.Reason), Detail: u.Message}
	}
	f.Schema = schema
	return f, nil
}

// fromError words a failed download with the shared reason codes (ciartifact.Reason).
func fromError(err error, name, ref string) *baseline.Unavailability {
	var ae *gitlab.APIError
	if !errors.As(err, &ae) {
		return unavailable(ciartifact.LocalIO, "could not write the baseline: %v", err)
	}
	switch ae.Kind {
	case gitlab.KindNotFound:
		return unavailable(ciartifact.NoArtifact, "no %s from a job %s on the latest successful pipeline of %s (GitLab answered 404; the job must keep it with `artifacts: paths: [%s]`)", ciartifact.FileName, name, ref, ciartifact.FileName)
	case gitlab.KindForbidden, gitlab.KindScope: // a role, or a token's scope (403 insufficient_scope)
		return unavailable(ciartifact.Forbidden, "%v", ae)
	case gitlab.KindUnauthorized:
		return unavailable(ciartifact.Unauthorized, "%v", ae)
	case gitlab.KindRateLimited:
		return unavailable(ciartifact.RateLimited, "%v", ae)
	case gitlab.KindServer:
		return unavailable(ciartifact.ServerError, "%v", ae)
	case gitlab.KindTooLarge:
		return unavailable(ciartifact.TooLarge, "%v", ae)
	case gitlab.KindNetwork:
		return unavailable(ciartifact.Network, "%v", ae)
	}
	return unavailable(ciartifact.Corrupt, "%v", ae)
}
