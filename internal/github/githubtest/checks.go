package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file is the Checks side of the fake, written from GitHub's REST
// documentation "REST API endpoints for check runs"
// (https://docs.github.com/en/rest/checks/runs):
//
//	POST  /repos/{owner}/{repo}/check-runs                      create a check run: 201
//	PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}        update a check run: 200
//	GET   /repos/{owner}/{repo}/commits/{ref}/check-runs         list check runs for a Git reference
//	      (check_name, status, filter=latest|all, per_page, page): {"total_count", "check_runs"}
//	GET   /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations   list check run annotations
//
// name and head_sha are required on create (head_sha a 40-digit commit id);
// status is queued, in_progress or completed; conclusion (action_required,
// cancelled, failure, neutral, success, skipped, stale, timed_out) is required
// with status completed and sets it to completed. output needs title and
// summary; summary and text hold at most 65,535 characters; at most 50
// annotations per request ("The Checks API limits the number of annotations to
// a maximum of 50 per API request. To create more than 50 annotations, you have
// to make multiple requests to the Update a check run endpoint. Each time you
// update the check run, annotations are appended to the list of annotations
// that already exist for the check run."). An annotation needs path,
// start_line, end_line, annotation_level (notice, warning or failure) and
// message; title and raw_details are optional; start_column and end_column only
// when start_line equals end_line. A token without checks: write (a fork's
// read-only token, or a workflow whose permissions leave out checks) gets 403
// "Resource not accessible by integration" on create and update; reading is
// allowed. Validation failures are 422 "Validation Failed" / "Invalid request".
// A check run belongs to the GitHub App whose installation token created it
// (the Actions workflow token's github-actions, id 15368; a GitHub App's,
// BotLogin's slug): "Update a check run" by another app's token answers 403
// "Invalid app_id `ID` - check run can only be modified by the GitHub App that
// created it." (ID the creator's), as GitHub does.

// MaxCheckText is the documented limit of a check run's output summary and text, in characters.
const MaxCheckText = 65535

// MaxAnnotationsPerRequest is the documented limit of annotations in one create or update.
const MaxAnnotationsPerRequest = 50

// CheckRun is a stored check run.
type CheckRun struct {
	ID          int64             `json:"id"`
	Name        string            `json:"name"`
	HeadSHA     string            `json:"head_sha"`
	Status      string            `json:"status"`
	Conclusion  string            `json:"conclusion,omitempty"`
	ExternalID  string            `json:"external_id,omitempty"`
	Title       string            `json:"title,omitempty"`
	Summary     string            `json:"summary,omitempty"`
	Text        string            `json:"text,omitempty"`
	Annotations []CheckAnnotation `json:"annotations,omitempty"`
	Requests    int               `json:"requests"` // the creates and updates it received
	StartedAt   time.Time         `json:"started_at"`
	App         string            `json:"app"` // the slug of the app that created it
}

// actionsAppID is the id of the GitHub Actions app, whose installation token
// is the workflow token; otherApp the id the fake gives any other app.
const (
	actionsAppID = 15368
	otherAppID   = 424242
)

// app is the slug of the app of the token (BotLogin without [bot]).
func (s *Server) app() string { return strings.TrimSuffix(s.BotLogin, "[bot]") }

func appID(slug string) int {
	if slug == "github-actions" {
		return actionsAppID
	}
	return otherAppID
}

// CheckAnnotation is an annotation of a check run, as the API takes it.
type CheckAnnotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	StartColumn     *int   `json:"start_column,omitempty"`
	EndColumn       *int   `json:"end_column,omitempty"`
	AnnotationLevel string `json:"annotation_level"`
	Message         string `json:"message"`
	Title           string `json:"title,omitempty"`
	RawDetails      string `json:"raw_details,omitempty"`
}

type checksState struct {
	runs []*CheckRun
	deny bool // the token lacks checks: write
}

// DenyChecks makes creates and updates of check runs answer 403 "Resource not
// accessible by integration", as for a token without checks: write.
func (s *Server) DenyChecks(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks.deny = deny
}

// CheckRuns returns copies of the stored check runs, oldest first.
func (s *Server) CheckRuns() []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CheckRun, 0, len(s.checks.runs))
	for _, r := range s.checks.runs {
		cp := *r
		cp.Annotations = append([]CheckAnnotation(nil), r.Annotations...)
		out = append(out, cp)
	}
	return out
}

const (
	docCreateCheck      = "https://docs.github.com/rest/checks/runs#create-a-check-run"
	docUpdateCheck      = "https://docs.github.com/rest/checks/runs#update-a-check-run"
	docListChecksForRef = "https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference"
	docListAnnotations  = "https://docs.github.com/rest/checks/runs#list-check-run-annotations"
)

var (
	checkRunsPath   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/check-runs$`)
	checkRunPath    = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/check-runs/([0-9]+)$`)
	annotationsPath = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/check-runs/([0-9]+)/annotations$`)
	refChecksPath   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/commits/([^/]+)/check-runs$`)
	commitSHA       = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// serveChecks answers the check-run endpoints; false means path is not one of
// them. The caller holds s.mu and has checked the token.
func (s *Server) serveChecks(w http.ResponseWriter, r *http.Request, path, body string) bool {
	var m []string
	var doc, method string
	switch {
	case checkRunsPath.MatchString(path):
		m, doc, method = checkRunsPath.FindStringSubmatch(path), docCreateCheck, http.MethodPost
	case checkRunPath.MatchString(path):
		m, doc, method = checkRunPath.FindStringSubmatch(path), docUpdateCheck, http.MethodPatch
	case annotationsPath.MatchString(path):
		m, doc, method = annotationsPath.FindStringSubmatch(path), docListAnnotations, http.MethodGet
	case refChecksPath.MatchString(path):
		m, doc, method = refChecksPath.FindStringSubmatch(path), docListChecksForRef, http.MethodGet
	default:
		return false
	}
	if r.Method != method || m[1] != s.Owner || m[2] != s.Repo {
		s.actionsError(w, http.StatusNotFound, "Not Found", doc)
		return true
	}
	if method != http.MethodGet && (s.ReadOnly || s.checks.deny) {
		s.actionsError(w, http.StatusForbidden, "Resource not accessible by integration", doc)
		return true
	}
	switch doc {
	case docCreateCheck:
		s.createCheck(w, body)
	case docUpdateCheck:
		id, _ := strconv.ParseInt(m[3], 10, 64)
		run := s.checkRun(id)
		if run == nil {
			s.actionsError(w, http.StatusNotFound, "Not Found", doc)
			return true
		}
		if run.App != s.app() {
			s.actionsError(w, http.StatusForbidden, fmt.Sprintf("Invalid app_id `%d` - check run can only be modified by the GitHub App that created it.", appID(run.App)), doc)
			return true
		}
		s.updateCheck(w, run, body)
	case docListAnnotations:
		id, _ := strconv.ParseInt(m[3], 10, 64)
		run := s.checkRun(id)
		if run == nil {
			s.actionsError(w, http.StatusNotFound, "Not Found", doc)
			return true
		}
		from, to := paginate(w, r, len(run.Annotations))
		out := make([]map[string]any, 0, to-from)
		for _, a := range run.Annotations[from:to] {
			out = append(out, map[string]any{"path": a.Path, "start_line": a.StartLine, "end_line": a.EndLine, "start_column": a.StartColumn,
				"end_column": a.EndColumn, "annotation_level": a.AnnotationLevel, "message": a.Message, "title": a.Title, "raw_details": a.RawDetails,
				"blob_href": fmt.Sprintf("https://github.com/%s/%s/blob/%s/%s", s.Owner, s.Repo, run.HeadSHA, a.Path)})
		}
		s.write(w, http.StatusOK, out)
	case docListChecksForRef:
		s.listChecks(w, r, m[3])
	}
	return true
}

func (s *Server) checkRun(id int64) *CheckRun {
	for _, c := range s.checks.runs {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// checkInput is the body of a create or an update.
type checkInput struct {
	Name        *string `json:"name"`
	HeadSHA     *string `json:"head_sha"`
	Status      *string `json:"status"`
	Conclusion  *string `json:"conclusion"`
	ExternalID  *string `json:"external_id"`
	CompletedAt *string `json:"completed_at"`
	Output      *struct {
		Title       *string           `json:"title"`
		Summary     *string           `json:"summary"`
		Text        *string           `json:"text"`
		Annotations []CheckAnnotation `json:"annotations"`
	} `json:"output"`
}

// decodeCheck validates a body; it writes the error answer and returns false on a bad one.
func (s *Server) decodeCheck(w http.ResponseWriter, body, doc string, create bool) (checkInput, bool) {
	var in checkInput
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		s.actionsError(w, http.StatusBadRequest, "Problems parsing JSON", doc)
		return in, false
	}
	invalid := func(msg string) (checkInput, bool) {
		s.write(w, http.StatusUnprocessableEntity, map[string]any{"message": "Invalid request.\n\n" + msg, "documentation_url": doc})
		return in, false
	}
	if create {
		if in.Name == nil || *in.Name == "" {
			return invalid(`"name" wasn't supplied.`)
		}
		if in.HeadSHA == nil || !commitSHA.MatchString(*in.HeadSHA) {
			return invalid(`"head_sha" wasn't supplied or is not a commit id.`)
		}
	}
	if in.Status != nil {
		switch *in.Status {
		case "queued", "in_progress", "completed":
		default:
			return invalid(fmt.Sprintf("%q is not a member of [\"queued\", \"in_progress\", \"completed\"].", *in.Status))
		}
	}
	if in.Conclusion != nil {
		switch *in.Conclusion {
		case "action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out":
		default:
			return invalid(fmt.Sprintf("%q is not a valid conclusion.", *in.Conclusion))
		}
	} else if in.Status != nil && *in.Status == "completed" {
		return invalid(`"conclusion" wasn't supplied.`)
	}
	if o := in.Output; o != nil {
		if o.Title == nil || o.Summary == nil {
			return invalid(`"title" and "summary" are required in "output".`)
		}
		if utf8.RuneCountInString(*o.Summary) > MaxCheckText {
			return invalid(fmt.Sprintf("For 'properties/summary', %d characters is more than the maximum of %d.", utf8.RuneCountInString(*o.Summary), MaxCheckText))
		}
		if o.Text != nil && utf8.RuneCountInString(*o.Text) > MaxCheckText {
			return invalid(fmt.Sprintf("For 'properties/text', %d characters is more than the maximum of %d.", utf8.RuneCountInString(*o.Text), MaxCheckText))
		}
		if len(o.Annotations) > MaxAnnotationsPerRequest {
			return invalid(fmt.Sprintf("Only %d annotations may be sent per request; got %d.", MaxAnnotationsPerRequest, len(o.Annotations)))
		}
		for i, a := range o.Annotations {
			switch {
			case a.Path == "" || a.StartLine < 1 || a.EndLine < a.StartLine || a.Message == "":
				return invalid(fmt.Sprintf("annotation %d: path, start_line, end_line and message are required.", i))
			case a.AnnotationLevel != "notice" && a.AnnotationLevel != "warning" && a.AnnotationLevel != "failure":
				return invalid(fmt.Sprintf("annotation %d: annotation_level %q is not one of notice, warning, failure.", i, a.AnnotationLevel))
			case (a.StartColumn != nil || a.EndColumn != nil) && a.StartLine != a.EndLine:
				return invalid(fmt.Sprintf("annotation %d: start_column and end_column need start_line equal to end_line.", i))
			case utf8.RuneCountInString(a.Title) > 255:
				return invalid(fmt.Sprintf("annotation %d: title is longer than 255 characters.", i))
			case len(a.Message) > 64*1024 || len(a.RawDetails) > 64*1024:
				return invalid(fmt.Sprintf("annotation %d: message and raw_details hold at most 64 KB.", i))
			}
		}
	}
	return in, true
}

func (s *Server) createCheck(w http.ResponseWriter, body string) {
	in, ok := s.decodeCheck(w, body, docCreateCheck, true)
	if !ok {
		return
	}
	s.nextID++
	run := &CheckRun{ID: s.nextID, Name: *in.Name, HeadSHA: *in.HeadSHA, Status: "queued", StartedAt: s.now().UTC(), App: s.app()}
	s.checks.runs = append(s.checks.runs, run)
	s.apply(run, in)
	s.write(w, http.StatusCreated, s.checkJSON(run))
}

func (s *Server) updateCheck(w http.ResponseWriter, run *CheckRun, body string) {
	in, ok := s.decodeCheck(w, body, docUpdateCheck, false)
	if !ok {
		return
	}
	if in.Name != nil && *in.Name != "" {
		run.Name = *in.Name
	}
	s.apply(run, in)
	s.write(w, http.StatusOK, s.checkJSON(run))
}

// apply sets what a valid create or update carries; annotations are appended.
func (s *Server) apply(run *CheckRun, in checkInput) {
	run.Requests++
	if in.Status != nil {
		run.Status = *in.Status
	}
	if in.Conclusion != nil {
		run.Conclusion, run.Status = *in.Conclusion, "completed"
	}
	if in.ExternalID != nil {
		run.ExternalID = *in.ExternalID
	}
	if o := in.Output; o != nil {
		run.Title, run.Summary = *o.Title, *o.Summary
		if o.Text != nil {
			run.Text = *o.Text
		}
		run.Annotations = append(run.Annotations, o.Annotations...)
	}
}

// listChecks lists the check runs of a commit (ref: a commit id; a branch or
// tag name resolves to nothing here), newest first; filter=latest (the
// default) keeps the most recent run of each name.
func (s *Server) listChecks(w http.ResponseWriter, r *http.Request, ref string) {
	q := r.URL.Query()
	var all []*CheckRun
	seen := map[string]bool{}
	for i := len(s.checks.runs) - 1; i >= 0; i-- {
		c := s.checks.runs[i]
		if c.HeadSHA != ref || (q.Has("check_name") && c.Name != q.Get("check_name")) || (q.Has("status") && c.Status != q.Get("status")) {
			continue
		}
		if q.Get("filter") != "all" {
			if seen[c.Name] {
				continue
			}
			seen[c.Name] = true
		}
		all = append(all, c)
	}
	from, to := paginate(w, r, len(all))
	runs := make([]map[string]any, 0, to-from)
	for _, c := range all[from:to] {
		runs = append(runs, s.checkJSON(c))
	}
	s.write(w, http.StatusOK, map[string]any{"total_count": len(all), "check_runs": runs})
}

func (s *Server) checkJSON(c *CheckRun) map[string]any {
	var conclusion any
	if c.Conclusion != "" {
		conclusion = c.Conclusion
	}
	return map[string]any{
		"id": c.ID, "node_id": fmt.Sprintf("CR_kwDOfake%d", c.ID), "name": c.Name, "head_sha": c.HeadSHA, "external_id": c.ExternalID,
		"status": c.Status, "conclusion": conclusion, "started_at": c.StartedAt.Format(time.RFC3339),
		"url":      fmt.Sprintf("%s%s/repos/%s/%s/check-runs/%d", s.URL, Prefix, s.Owner, s.Repo, c.ID),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/runs/%d", s.Owner, s.Repo, c.ID),
		"output": map[string]any{"title": c.Title, "summary": c.Summary, "text": c.Text, "annotations_count": len(c.Annotations),
			"annotations_url": fmt.Sprintf("%s%s/repos/%s/%s/check-runs/%d/annotations", s.URL, Prefix, s.Owner, s.Repo, c.ID)},
		"app": map[string]any{"id": appID(c.App), "slug": c.App},
	}
}
