// Package ghbranch keeps a history (internal/history's history.jsonl) on a
// branch of the repository, through GitHub's REST API, so that GitHub Pages can
// publish its page. Contract:
//
//   - The branch holds HistoryFile, in exactly the local format (one record a
//     line), IndexFile (the history page, rendered from the whole HistoryFile
//     by the caller's Page function), NoJekyll (so Pages serves the files as
//     they are) and, for runs that published one, their HTML report under
//     reports/ (the record's "report" key names it).
//   - Read: GET contents/history.jsonl?ref=BRANCH (object media type; a file
//     over 1 MB comes back with "encoding": "none" and is read through GET
//     git/blobs/{sha}, up to 100 MB); the content's git blob id is checked
//     against its sha. A missing branch or file is "no history", not an error.
//     Reads are allowed from any event, forks and pull requests included (the
//     token only needs contents: read, and a public repository needs none).
//   - Append: read history.jsonl with its sha, append the record's line, PUT it
//     back with that sha. GitHub refuses the PUT when the file changed since
//     (409 "does not match", or 422 "\"sha\" wasn't supplied" when another run
//     created it): the record is re-read and re-appended, at most MaxAttempts
//     times, with a short jittered wait. A line already present (a PUT that
//     landed although its answer was lost) is not appended twice. A missing
//     branch is created as an orphan branch (git data API: one blob per file,
//     a tree, a commit without parents, the ref; 422 "Reference already exists"
//     when another run created it first: re-read and append).
//   - Order and commits (each contents PUT is one commit): the run's report
//     first (a new file, so a record never links to a report that is not there),
//     then history.jsonl (the truth: the run is recorded once it lands), then
//     index.html, re-rendered from the history read after the append and written
//     with the sha read before it, so the last writer's page holds every record
//     (a failed page write heals on the next run). So 2 commits per run, 3 with a
//     report; the run that creates the branch makes 1.
//   - Rate limits and 5xx are retried by internal/httpretry (Policy); what is
//     left is an *Error with a Kind and a Fix. The token is sent only to the
//     API's origin and never appears in a message.
//   - WriteAllowed says whether a run may write: inside Actions, on a push,
//     schedule, workflow_dispatch or repository_dispatch event (never a pull
//     request, pull_request_target, issue_comment, …), with GITHUB_REF the
//     repository's default branch (the payload's repository.default_branch),
//     in a repository that is not a fork (repository.fork).
package ghbranch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

const (
	// DefaultBranch is the branch the docs recommend.
	DefaultBranch = "retrieval-gate-history"
	// HistoryFile is the history on the branch, at its root.
	HistoryFile = history.FileName
	// IndexFile is the history page, what GitHub Pages serves at the root.
	IndexFile = "index.html"
	// NoJekyll tells GitHub Pages to serve the files as they are.
	NoJekyll = ".nojekyll"
	// MaxFile is GitHub's limit on a file written or read through the API (100 MB).
	MaxFile = 100 << 20
	// MaxAttempts bounds the re-reads after a conflicting write.
	MaxAttempts = 6
)

// Run is what one run appends.
type Run struct {
	// Line is the history record, one JSON line (a trailing newline is added
	// when missing).
	Line []byte
	// ReportPath and Report: the run's HTML report and where it goes
	// (history.ReportPath), or both empty.
	ReportPath string
	Report     []byte
	// Page renders the history page from the whole history file, under
	// Append's context; nil writes no index.html.
	Page func(ctx context.Context, history []byte) ([]byte, error)
	// Message is the commit message ("retrieval-gate: check 0123456789ab").
	Message string
}

// Result is what Append did.
type Result struct {
	Created  bool // the branch was created (one commit)
	Commits  int  // commits made
	Attempts int  // reads of history.jsonl (1 without a conflict)
	Already  bool // the line was already in the history (not appended again)
	// Recorded is true once history.jsonl holds the line: an error after it
	// (the page) leaves the run recorded.
	Recorded bool
}

// Sleep waits between the attempts after a conflict (tests may replace it).
var Sleep = httpretry.Sleep

// wait is the pause before attempt n (2, 3, …): 200 ms doubling to 3.2 s, with
// full jitter, so two runs that collided do not collide again in step.
func wait(n int) time.Duration {
	d := 200 * time.Millisecond << min(n-2, 4)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// Append adds run to the history on branch (see the package documentation).
func (c *Client) Append(ctx context.Context, branch string, run Run) (Result, error) {
	var res Result
	if err := ValidBranch(branch); err != nil {
		return res, err
	}
	line := run.Line
	if len(line) == 0 || bytes.Count(line, []byte("\n")) > 1 || (bytes.IndexByte(line, '\n') >= 0 && line[len(line)-1] != '\n') {
		return res, errors.New("ghbranch: the record is not one line")
	}
	if line[len(line)-1] != '\n' {
		line = append(line[:len(line):len(line)], '\n')
	}
	if (run.ReportPath == "") != (run.Report == nil) || (run.ReportPath != "" && !history.ReportPath.MatchString(run.ReportPath)) {
		return res, fmt.Errorf("ghbranch: the report path %q is not reports/NAME.html", run.ReportPath)
	}
	reportDone := run.ReportPath == ""
	for {
		if res.Attempts == MaxAttempts {
			return res, &Error{Op: "append to " + HistoryFile + " on branch " + github.OneLine(branch), Kind: KindConflict,
				Message: fmt.Sprintf("the file changed under every one of %d attempts", MaxAttempts)}
		}
		res.Attempts++
		if res.Attempts > 1 {
			if err := Sleep(ctx, wait(res.Attempts)); err != nil {
				return res, err
			}
		}
		cur, err := c.get(ctx, branch, HistoryFile)
		if errors.Is(err, errNoBranch) {
			files := map[string][]byte{HistoryFile: line, NoJekyll: {}}
			order := []string{NoJekyll, HistoryFile}
			if run.Page != nil {
				page, err := run.Page(ctx, line)
				if err != nil {
					return res, err
				}
				files[IndexFile] = page
				order = append(order, IndexFile)
			}
			if run.ReportPath != "" {
				files[run.ReportPath] = run.Report
				order = append(order, run.ReportPath)
			}
			err := c.createBranch(ctx, branch, run.Message, files, order)
			if errors.Is(err, errConflict) {
				continue
			}
			if err != nil {
				return res, err
			}
			res.Created, res.Commits, res.Recorded = true, 1, true
			return res, nil
		}
		if err != nil {
			return res, err
		}
		if !reportDone {
			switch err := c.putNew(ctx, branch, run.ReportPath, run.Message+" (report)", run.Report); {
			case errors.Is(err, errNoBranch):
				continue
			case err != nil:
				return res, err
			}
			reportDone = true
			res.Commits++
		}
		var content []byte
		sha := ""
		if cur != nil {
			content, sha = cur.content, cur.sha
		}
		if hasLine(content, line) {
			res.Already, res.Recorded = true, true
			break
		}
		next := make([]byte, 0, len(content)+1+len(line))
		next = append(next, content...)
		if len(next) > 0 && next[len(next)-1] != '\n' {
			next = append(next, '\n')
		}
		next = append(next, line...)
		switch err := c.put(ctx, branch, HistoryFile, run.Message, next, sha); {
		case errors.Is(err, errConflict), errors.Is(err, errNoBranch):
			continue
		case err != nil:
			return res, err
		}
		res.Commits++
		res.Recorded = true
		break
	}
	if run.Page == nil {
		return res, nil
	}
	n, err := c.writePage(ctx, branch, run)
	res.Commits += n
	return res, err
}

// hasLine reports whether content holds line (with its newline) as a whole line.
func hasLine(content, line []byte) bool {
	for i := 0; ; {
		j := bytes.Index(content[i:], line)
		if j < 0 {
			return false
		}
		if at := i + j; at == 0 || content[at-1] == '\n' {
			return true
		}
		i += j + 1
	}
}

// putNew writes a new file; when one is already there (a rerun of the same
// commit in the same second), it is replaced.
func (c *Client) putNew(ctx context.Context, branch, path, message string, content []byte) error {
	for range MaxAttempts {
		err := c.put(ctx, branch, path, message, content, "")
		if !errors.Is(err, errConflict) {
			return err
		}
		cur, err := c.get(ctx, branch, path)
		if err != nil {
			return err
		}
		if cur != nil && bytes.Equal(cur.content, content) {
			return nil
		}
		sha := ""
		if cur != nil {
			sha = cur.sha
		}
		if err := c.put(ctx, branch, path, message, content, sha); !errors.Is(err, errConflict) {
			return err
		}
	}
	return &Error{Op: "write " + path, Kind: KindConflict, Message: "the file changed under every attempt"}
}

// writePage re-renders index.html from the history and writes it; it returns
// the commits made (0 when the page is unchanged).
func (c *Client) writePage(ctx context.Context, branch string, run Run) (int, error) {
	for attempt := 1; attempt <= MaxAttempts; attempt++ {
		if attempt > 1 {
			if err := Sleep(ctx, wait(attempt)); err != nil {
				return 0, err
			}
		}
		// The page's sha before the history: a page written by a later run
		// then always rendered a history that holds this run's record.
		idx, err := c.get(ctx, branch, IndexFile)
		if err != nil {
			return 0, err
		}
		h, err := c.get(ctx, branch, HistoryFile)
		if err != nil {
			return 0, err
		}
		if h == nil {
			return 0, &Error{Op: "render " + IndexFile, Kind: KindInvalid, Message: HistoryFile + " disappeared from the branch"}
		}
		page, err := run.Page(ctx, h.content)
		if err != nil {
			return 0, err
		}
		sha := ""
		if idx != nil {
			if bytes.Equal(idx.content, page) {
				return 0, nil
			}
			sha = idx.sha
		}
		switch err := c.put(ctx, branch, IndexFile, run.Message+" (page)", page, sha); {
		case errors.Is(err, errConflict), errors.Is(err, errNoBranch):
			continue
		case err != nil:
			return 0, err
		}
		return 1, nil
	}
	return 0, &Error{Op: "write " + IndexFile + " on branch " + github.OneLine(branch), Kind: KindConflict,
		Message: fmt.Sprintf("the page changed under every one of %d attempts", MaxAttempts)}
}

// Read returns the history file on branch; found is false when the branch or
// the file does not exist. Pull requests and forks may read.
func (c *Client) Read(ctx context.Context, branch string) (r io.Reader, found bool, err error) {
	if err := ValidBranch(branch); err != nil {
		return nil, false, err
	}
	f, err := c.get(ctx, branch, HistoryFile)
	if errors.Is(err, errNoBranch) || (err == nil && f == nil) {
		return bytes.NewReader(nil), false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return bytes.NewReader(f.content), true, nil
}

// branchName is what ValidBranch accepts: git's rules for a branch name,
// restricted to printable ASCII without spaces.
var branchName = regexp.MustCompile(`^[A-Za-z0-9._/-]{1,200}$`)

// ValidBranch checks a --history-branch name by git's rules (check-ref-format):
// no "..", no "//", no component starting with "." or ending with ".lock", not
// starting with "-" or "/", not ending with "/" or ".", and no characters but
// letters, digits and . _ / -.
func ValidBranch(name string) error {
	bad := !branchName.MatchString(name) || strings.Contains(name, "..") || strings.Contains(name, "//") ||
		strings.HasPrefix(name, "-") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") ||
		name == "HEAD"
	for _, part := range strings.Split(name, "/") {
		bad = bad || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock")
	}
	if bad {
		return fmt.Errorf("%q is not a branch name (letters, digits and . _ / -, by git's rules)", github.OneLine(name))
	}
	return nil
}

// WriteAllowed says whether this run may write the history branch, and when it
// may not, why (one sentence).
func WriteAllowed(a *github.Actions) (bool, string) {
	switch {
	case !a.InActions:
		return false, "this is not a GitHub Actions run"
	case !github.WriteEvent(a.EventName):
		return false, fmt.Sprintf("the event is %q: the history branch is written only by push, schedule or workflow_dispatch runs on the default branch, never by pull requests", github.OneLine(a.EventName))
	case a.RepoFork:
		return false, "this repository is a fork: the history branch is written only in the repository itself"
	case a.DefaultBranch == "":
		return false, "the event payload names no default branch (repository.default_branch)"
	case a.Ref != "refs/heads/"+a.DefaultBranch:
		return false, fmt.Sprintf("GITHUB_REF is %q, not the default branch refs/heads/%s", github.OneLine(a.Ref), github.OneLine(a.DefaultBranch))
	}
	return true, ""
}
