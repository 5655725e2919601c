package github

import (
	"context"
	"time"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// The check-run calls (GitHub's REST documentation "REST API endpoints for check
// runs", https://docs.github.com/en/rest/checks/runs): create, update, list for
// a commit, and list a run's annotations. A check run shows every annotation
// on the pull request's diff, where workflow commands show at most 10 per step.

// MaxCheckAnnotations is how many annotations one create or update may carry
// ("The Checks API limits the number of annotations to a maximum of 50 per API
// request").
const MaxCheckAnnotations = 50

// MaxCheckSummary is the documented limit of a check run's summary, in characters.
const MaxCheckSummary = 65535

// MaxCheckAnnotationMessage bounds an annotation's message, in bytes ("The
// maximum size is 64 KB": read as 64,000 bytes, the smaller of its readings).
// A longer one makes GitHub refuse the whole request with 422.
const MaxCheckAnnotationMessage = 64000

// MaxCheckAnnotationTitle bounds an annotation's title, in characters ("The
// maximum size is 255 characters").
const MaxCheckAnnotationTitle = 255

// CheckAnnotation is one annotation of a check run: a whole line of a file.
type CheckAnnotation struct {
	Path    string // relative to the repository root
	Line    int    // 1-based
	Level   string // notice, warning or failure
	Title   string
	Message string
}

// CheckOutput is what a create or update writes: the title and summary shown
// on the check run's page, and annotations appended to those it has.
type CheckOutput struct {
	Title, Summary string
	Annotations    []CheckAnnotation
}

// CheckRun is a check run as the API returns it.
type CheckRun struct {
	ID          int64
	URL         string // html_url
	Annotations int    // output.annotations_count
}

// maxCheckPages bounds the listings of check runs and annotations (100 a page).
const maxCheckPages = 200

// The check-run answers are bounded as the comments' are (comment.go): a check
// run echoes its output's summary and text (65,535 characters each, at most
// 6 bytes each in JSON) besides its fields and app; an annotation its message
// and raw details (64 KiB each); a listing page 100 of either.
const (
	maxCheckRunAnswer   = 2*65536*6 + 128<<10
	maxAnnotationAnswer = 2*65536*6 + 64<<10
)

// CheckRunExternalID is the external_id of the check runs CreateCheckRun
// creates. FindCheckRun finds only those: a workflow job is a check run too,
// named after the job and made by the same GitHub Actions app as the workflow
// token, which may update it, so a job named like a report's check run must
// not be taken for it (its external_id is the job's own).
const CheckRunExternalID = "retrieval-gate"

// FindCheckRun is the most recent check run named name on commit sha that
// CreateCheckRun created (external_id CheckRunExternalID), if any: the newest
// (the largest id) of the first 100 of that name.
func (c *Client) FindCheckRun(ctx context.Context, sha, name string) (CheckRun, bool, error) {
	opts := &gogithub.ListCheckRunsOptions{CheckName: gogithub.String(name), Filter: gogithub.String("all"), ListOptions: gogithub.ListOptions{PerPage: 100}}
	res, _, err := c.gh.Checks.ListCheckRunsForRef(httpretry.WithMaxValues(httpretry.WithMaxBody(ctx, 100*maxCheckRunAnswer), httpretry.MaxPageValues), c.owner, c.repo, sha, opts)
	if err != nil {
		return CheckRun{}, false, classifyAs("list", "check run", err)
	}
	var found *gogithub.CheckRun
	for _, r := range res.CheckRuns {
		if r.GetName() == name && r.GetHeadSHA() == sha && r.GetExternalID() == CheckRunExternalID && (found == nil || r.GetID() > found.GetID()) {
			found = r
		}
	}
	if found == nil {
		return CheckRun{}, false, nil
	}
	return checkRun(found), true, nil
}

// CheckRunAnnotations lists every annotation of a check run.
func (c *Client) CheckRunAnnotations(ctx context.Context, id int64) ([]CheckAnnotation, error) {
	opts := &gogithub.ListOptions{PerPage: 100}
	var out []CheckAnnotation
	for page := 0; page < maxCheckPages; page++ {
		anns, resp, err := c.gh.Checks.ListCheckRunAnnotations(httpretry.WithMaxValues(httpretry.WithMaxBody(ctx, 100*maxAnnotationAnswer), httpretry.MaxPageValues), c.owner, c.repo, id, opts)
		if err != nil {
			return nil, classifyAs("list", "check run's annotations", err)
		}
		for _, a := range anns {
			out = append(out, CheckAnnotation{Path: a.GetPath(), Line: a.GetStartLine(), Level: a.GetAnnotationLevel(), Title: a.GetTitle(), Message: a.GetMessage()})
		}
		if resp.NextPage == 0 || resp.NextPage == opts.Page {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// CreateCheckRun creates a completed check run named name on commit sha with
// conclusion (success, failure, ...) and out (at most MaxCheckAnnotations),
// external_id CheckRunExternalID.
func (c *Client) CreateCheckRun(ctx context.Context, name, sha, conclusion string, out CheckOutput) (CheckRun, error) {
	now := gogithub.Timestamp{Time: time.Now()}
	r, _, err := c.gh.Checks.CreateCheckRun(httpretry.WithMaxValues(httpretry.WithMaxBody(ctx, maxCheckRunAnswer), httpretry.MaxPageValues), c.owner, c.repo, gogithub.CreateCheckRunOptions{Name: name, HeadSHA: sha,
		ExternalID: gogithub.String(CheckRunExternalID), Status: gogithub.String("completed"), Conclusion: gogithub.String(conclusion), CompletedAt: &now, Output: checkOutput(out)})
	if err != nil {
		return CheckRun{}, classifyAs("create", "check run", err)
	}
	return checkRun(r), nil
}

// UpdateCheckRun updates check run id: its conclusion when not "", its title
// and summary, and appends out's annotations (at most MaxCheckAnnotations).
func (c *Client) UpdateCheckRun(ctx context.Context, id int64, name, conclusion string, out CheckOutput) (CheckRun, error) {
	opts := gogithub.UpdateCheckRunOptions{Name: name, Output: checkOutput(out)}
	if conclusion != "" {
		now := gogithub.Timestamp{Time: time.Now()}
		opts.Status, opts.Conclusion, opts.CompletedAt = gogithub.String("completed"), gogithub.String(conclusion), &now
	}
	r, _, err := c.gh.Checks.UpdateCheckRun(httpretry.WithMaxValues(httpretry.WithMaxBody(ctx, maxCheckRunAnswer), httpretry.MaxPageValues), c.owner, c.repo, id, opts)
	if err != nil {
		return CheckRun{}, classifyAs("update", "check run", err)
	}
	return checkRun(r), nil
}

func checkOutput(out CheckOutput) *gogithub.CheckRunOutput {
	o := &gogithub.CheckRunOutput{Title: gogithub.String(out.Title), Summary: gogithub.String(out.Summary)}
	for _, a := range out.Annotations {
		line := max(a.Line, 1)
		ca := &gogithub.CheckRunAnnotation{Path: gogithub.String(a.Path), StartLine: gogithub.Int(line), EndLine: gogithub.Int(line),
			AnnotationLevel: gogithub.String(a.Level), Message: gogithub.String(a.Message)}
		if a.Title != "" {
			ca.Title = gogithub.String(a.Title)
		}
		o.Annotations = append(o.Annotations, ca)
	}
	return o
}

func checkRun(r *gogithub.CheckRun) CheckRun {
	return CheckRun{ID: r.GetID(), URL: r.GetHTMLURL(), Annotations: r.GetOutput().GetAnnotationsCount()}
}
