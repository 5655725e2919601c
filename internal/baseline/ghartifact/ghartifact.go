// Package ghartifact finds the baseline of `check --baseline auto` inside GitHub
// Actions: the newest baseline artifact that a successful run on the pull request's
// base branch uploaded, fetched through the REST API and verified.
//
// Contract of Fetch (the one entry point):
//
//   - The base branch is Deps.Branch when set, else read from the event payload at
//     Deps.EventPath: pull_request.base.ref (pull_request, pull_request_target),
//     merge_group.base_ref, else repository.default_branch (push, schedule,
//     workflow_dispatch, ...).
//   - It lists the repository's artifacts called name (GET
//     /repos/{owner}/{repo}/actions/artifacts?name=, 100 per page, following the Link
//     header, at most MaxPages pages) and keeps those whose workflow_run has the base
//     branch as head_branch and the repository itself as head repository (a fork's
//     branch of the same name never qualifies, nor a run that does not give its
//     repository_id). Newest first (created_at, then id),
//     it looks up each one's run (GET /actions/runs/{id}, at most MaxRunLookups) and
//     takes the first whose run completed with conclusion "success" from an allowed
//     event: push, schedule, workflow_dispatch or repository_dispatch (the history
//     writer's allowlist; never pull_request, issue_comment, workflow_run or any
//     other). Expired artifacts and artifacts of failed, cancelled, still-running
//     or other events' runs are passed over; that
//     newest eligible artifact is the baseline, and when it turns out to be unusable
//     (too large, corrupt, gone) Fetch reports that rather than fall back to an older
//     one, so a stale baseline never passes silently for the current one.
//   - It downloads the archive (GET /actions/artifacts/{id}/zip). GitHub answers 302
//     with a signed URL on another host; the redirect policy removes Authorization
//     on any change of scheme, host or port, so the token never leaves the API host.
//     The archive is bounded by MaxArchiveBytes (also checked against size_in_bytes
//     before downloading), the baseline file inside it by ciartifact.MaxFileBytes,
//     and its gzip expansion by ciartifact.MaxExpandedBytes.
//   - Artifact layout: a zip (what actions/upload-artifact makes) holding the file
//     ciartifact.FileName, baseline.jsonl.gz, at its root; other entries are
//     ignored. The file must be gzip whose first line is a JSON object with a
//     string "schema" that starts with ciartifact.SchemaPrefix (ciartifact.VerifyFile,
//     which GitLab's adapter shares); the rest is opaque here (the baseline comparison
//     reads it). The whole gzip stream is decoded once, so a truncated or corrupt
//     file is caught here, with its CRC.
//   - It writes the file to Deps.Dir (a new temporary directory when empty) and
//     returns *Found with its path and the artifact's metadata. Found.Cleanup removes
//     what Fetch wrote.
//   - Everything that prevents a baseline — not in Actions, no such artifact, expired,
//     403 without `actions: read`, 404, 401, rate limit, 5xx, network failure, a
//     corrupt or oversized archive — is *Unavailable with a Reason code (the codes
//     of package ciartifact, which GitLab's adapter shares) and a
//     one-line human Message: never an error that fails the run. Messages never hold
//     the token, request headers or the signed URL's query, and control characters
//     are removed from every quoted value.
//   - Exactly one of the two results is non-nil. Deps.HTTP nil means an httpretry
//     client with Policy (GitHub's retries; 5 minutes per attempt for the download).
//     An injected client is copied, never modified; Fetch replaces its redirect
//     rule with its own and sets Authorization itself, only on requests to the API
//     origin. An injected transport may add credentials too, but only for the API
//     origin (httpretry.Transport with Origin does exactly that).
package ghartifact

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ciartifact"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// The artifact's file (ciartifact.FileName, baseline.jsonl.gz), its schema
// (ciartifact.SchemaPrefix) and the caps on it (ciartifact.MaxFileBytes,
// MaxExpandedBytes, MaxHeaderBytes) are the artifact package's, which GitLab's
// adapter shares.
const (
	// NamePrefix starts the default artifact name; the comment key follows.
	NamePrefix = "retrieval-gate-baseline-"

	// MaxArchiveBytes caps the downloaded zip (256 MiB).
	MaxArchiveBytes int64 = 256 << 20

	// MaxPages bounds the artifact listing (100 per page).
	MaxPages = 10
	// MaxRunLookups bounds how many candidates' workflow runs are looked up.
	MaxRunLookups = 10
)

// limits are the caps in force (tests lower them to exercise the bounds quickly).
var limits = struct {
	archive, file, expanded int64
	header                  int
}{MaxArchiveBytes, ciartifact.MaxFileBytes, ciartifact.MaxExpandedBytes, ciartifact.MaxHeaderBytes}

// DefaultName is the artifact name for a comment key: NamePrefix + key, with each
// "/" (allowed in keys, not in artifact names) written as "-".
func DefaultName(commentKey string) string {
	return NamePrefix + strings.ReplaceAll(commentKey, "/", "-")
}

// ValidName checks an artifact name by actions/upload-artifact's rules: not empty,
// at most 256 characters, none of " : < > | * ? \ / and no CR or LF.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("the artifact name is empty")
	}
	if len(name) > 256 {
		return fmt.Errorf("the artifact name is longer than 256 characters")
	}
	if i := strings.IndexAny(name, "\":<>|*?\\/\r\n"); i >= 0 {
		return fmt.Errorf("the artifact name %q holds %q, which artifact names may not", github.OneLine(name), name[i:i+1])
	}
	return nil
}

// Deps is what Fetch needs from its environment, injected.
type Deps struct {
	HTTP      *http.Client     // nil: httpretry.NewHTTPClient with Policy
	APIURL    string           // GITHUB_API_URL, e.g. https://api.github.com
	Token     string           // the workflow token; "" sends no Authorization
	Repo      string           // GITHUB_REPOSITORY, owner/name (the base repository)
	EventPath string           // GITHUB_EVENT_PATH
	Branch    string           // the base branch; "" reads it from the event
	Dir       string           // where the baseline file goes; "" makes a temporary directory
	Now       func() time.Time // nil: time.Now
}

// Found is a verified baseline on disk.
type Found struct {
	Path       string    // the baseline file (Dir/baseline.jsonl.gz)
	Name       string    // artifact name
	ArtifactID int64     //
	RunID      int64     // the workflow run that uploaded it
	HeadSHA    string    // the commit the baseline measured
	Branch     string    // the base branch it was taken on
	CreatedAt  time.Time // when the artifact was uploaded
	ExpiresAt  time.Time
	SizeBytes  int64    // archive size_in_bytes
	Schema     string   // the "schema" of the file's first line
	Skipped    []string // newer artifacts passed over, and why (newest first)

	cleanup []string // paths to remove, last first
}

// Cleanup removes the file Fetch wrote (and the directory, when Fetch made it).
func (f *Found) Cleanup() error {
	var first error
	for i := len(f.cleanup) - 1; i >= 0; i-- {
		if err := os.Remove(f.cleanup[i]); err != nil && !os.IsNotExist(err) && first == nil {
			first = err
		}
	}
	f.cleanup = nil
	return first
}

// Reason classifies why no baseline is available (the codes both CI hosts'
// adapters share).
type Reason = ciartifact.Reason

// Unavailable says why there is no baseline. Message is one line for humans (the
// warning and the PR comment's "vs base" line).
type Unavailable = ciartifact.Unavailable

func unavailable(r Reason, format string, args ...any) *Unavailable {
	return ciartifact.Unavailablef(r, format, args...)
}

// Fetch finds, downloads and verifies the baseline artifact called name. See the
// package documentation for the contract.
func Fetch(ctx context.Context, d Deps, name string) (*Found, *Unavailable) {
	f, u := fetch(ctx, d, name)
	if u != nil {
		// Belt and braces: nothing above quotes the token, but no message may hold it.
		u.Message = httpretry.RedactText(u.Message, d.Token)
	}
	return f, u
}

func fetch(ctx context.Context, d Deps, name string) (*Found, *Unavailable) {
	if err := ValidName(name); err != nil {
		return nil, unavailable(ciartifact.NoContext, "%v", err)
	}
	owner, repo, ok := strings.Cut(strings.TrimSpace(d.Repo), "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return nil, unavailable(ciartifact.NoContext, "the repository is unknown (GITHUB_REPOSITORY is %q, want owner/name)", github.OneLine(d.Repo))
	}
	branch := strings.TrimSpace(d.Branch)
	if branch == "" {
		var u *Unavailable
		if branch, u = baseBranch(d.EventPath); u != nil {
			return nil, u
		}
	}
	c, u := newClient(d, owner, repo)
	if u != nil {
		return nil, u
	}
	cand, u := c.find(ctx, name, branch)
	if u != nil {
		return nil, u
	}
	dir, made := d.Dir, false
	if dir == "" {
		tmp, err := os.MkdirTemp("", "retrieval-gate-baseline-")
		if err != nil {
			return nil, unavailable(ciartifact.LocalIO, "could not make a directory for the baseline: %v", err)
		}
		dir, made = tmp, true
	}
	f, u := c.fetch(ctx, cand, filepath.Join(dir, ciartifact.FileName))
	if u != nil {
		if made {
			os.Remove(dir)
		}
		return nil, u
	}
	for i, s := range f.Skipped {
		f.Skipped[i] = httpretry.RedactText(s, d.Token)
	}
	f.Name, f.Branch = name, branch
	f.cleanup = []string{f.Path}
	if made {
		f.cleanup = []string{dir, f.Path}
	}
	return f, nil
}
