// Package github is the GitHub side of retrieval-gate: the Actions environment of a
// step (inputs, outputs, job summary, annotations, masking) and the sticky PR comment.
// It knows nothing about metrics or reports: callers hand it finished Markdown.
package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/guard"
	"github.com/retrieval-gate/retrieval-gate/internal/relpath"
)

// DefaultAPIURL is the API base when GITHUB_API_URL is unset (github.com).
const DefaultAPIURL = "https://api.github.com"

// Actions is what the GitHub Actions runner tells a step through its environment.
// Outside Actions (InActions false) every method that writes is a no-op.
type Actions struct {
	InActions  bool   // GITHUB_ACTIONS=true
	APIURL     string // GITHUB_API_URL, DefaultAPIURL when unset
	GraphQLURL string // GITHUB_GRAPHQL_URL, "" when unset (derived from APIURL: GraphQLURL)
	Repository string // GITHUB_REPOSITORY, owner/name
	EventName  string // GITHUB_EVENT_NAME
	Ref        string // GITHUB_REF, e.g. refs/heads/main or refs/pull/7/merge
	// SHA is the commit a check run belongs on: the pull request's head commit
	// on the pull request's events (pull_request.head.sha; GITHUB_SHA is the
	// merge commit there), else GITHUB_SHA.
	SHA string
	// DefaultBranch and RepoFork are the event payload's repository.default_branch
	// and repository.fork ("" and false when the payload has no repository).
	DefaultBranch string
	RepoFork      bool
	PR            int    // pull request number from the event payload, 0 when none
	Fork          bool   // the PR's head repository differs from its base repository
	HeadRepo      string // head.repo.full_name of the PR ("" when the fork was deleted)
	BaseRepo      string // base.repo.full_name of the PR
	Workspace     string // GITHUB_WORKSPACE
	StepSummary   string // GITHUB_STEP_SUMMARY file
	OutputFile    string // GITHUB_OUTPUT file

	gha *githubactions.Action
}

// ReadActions reads the step's environment. Workflow commands (::warning:: and the
// like) go to stdout, where the runner reads them. A missing or malformed event
// payload is reported as an error next to a usable *Actions (without a PR number).
func ReadActions(getenv func(string) string, stdout io.Writer) (*Actions, error) {
	a := &Actions{
		InActions:   getenv("GITHUB_ACTIONS") == "true",
		APIURL:      strings.TrimSpace(getenv("GITHUB_API_URL")),
		GraphQLURL:  strings.TrimSpace(getenv("GITHUB_GRAPHQL_URL")),
		Repository:  strings.TrimSpace(getenv("GITHUB_REPOSITORY")),
		EventName:   getenv("GITHUB_EVENT_NAME"),
		Ref:         strings.TrimSpace(getenv("GITHUB_REF")),
		SHA:         strings.TrimSpace(getenv("GITHUB_SHA")),
		Workspace:   getenv("GITHUB_WORKSPACE"),
		StepSummary: getenv("GITHUB_STEP_SUMMARY"),
		OutputFile:  getenv("GITHUB_OUTPUT"),
		gha:         githubactions.New(githubactions.WithWriter(stdout), githubactions.WithGetenv(getenv)),
	}
	if a.APIURL == "" {
		a.APIURL = DefaultAPIURL
	}
	if !a.InActions {
		return a, nil
	}
	path := getenv("GITHUB_EVENT_PATH")
	if path == "" {
		return a, nil
	}
	ev, err := readEvent(path)
	if err != nil {
		return a, err
	}
	a.applyEvent(ev)
	return a, nil
}

// event is the part of a webhook payload that locates a pull request.
type event struct {
	Number      int `json:"number"`
	PullRequest *struct {
		Number int `json:"number"`
		Head   struct {
			SHA  string `json:"sha"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"base"`
	} `json:"pull_request"`
	Issue *struct {
		Number      int              `json:"number"`
		PullRequest *json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Repository *struct {
		DefaultBranch string `json:"default_branch"`
		Fork          bool   `json:"fork"`
	} `json:"repository"`
}

// MaxEventBytes bounds the event payload read from GITHUB_EVENT_PATH (GitHub
// caps a webhook payload at 25 MB).
const MaxEventBytes = 64 << 20

// ReadEventFile reads the event payload at path: a regular file (a named pipe
// or a device is refused before it is opened: an open of a FIFO waits for a
// writer) of at most MaxEventBytes (a longer or endless one is refused, read no
// further than the cap).
func ReadEventFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxEventBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxEventBytes {
		return nil, fmt.Errorf("%s is larger than %d MiB, more than GitHub sends", path, MaxEventBytes>>20)
	}
	return data, nil
}

func readEvent(path string) (*event, error) {
	data, err := ReadEventFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the event payload: %w", err)
	}
	ev, err := parseEvent(data)
	if err != nil {
		return nil, fmt.Errorf("failed to read the event payload %s: %w", path, err)
	}
	return ev, nil
}

func parseEvent(data []byte) (*event, error) {
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

func (a *Actions) applyEvent(ev *event) {
	if ev.Repository != nil {
		a.DefaultBranch, a.RepoFork = strings.TrimSpace(ev.Repository.DefaultBranch), ev.Repository.Fork
	}
	switch a.EventName {
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
		if ev.PullRequest == nil {
			return
		}
		a.PR = ev.PullRequest.Number
		if a.PR == 0 {
			a.PR = ev.Number
		}
		if r := ev.PullRequest.Base.Repo; r != nil {
			a.BaseRepo = r.FullName
		}
		if r := ev.PullRequest.Head.Repo; r != nil {
			a.HeadRepo = r.FullName
		}
		if sha := strings.TrimSpace(ev.PullRequest.Head.SHA); sha != "" {
			a.SHA = sha
		}
		if a.PR < 0 {
			a.PR = 0
		}
		// A deleted fork has head.repo null: still a fork.
		a.Fork = a.HeadRepo == "" || !strings.EqualFold(a.HeadRepo, a.BaseRepo)
	case "issue_comment":
		if ev.Issue != nil && ev.Issue.PullRequest != nil && ev.Issue.Number > 0 {
			a.PR = ev.Issue.Number
		}
	}
}

// ReadOnlyToken reports whether the workflow token is read-only by GitHub's rules:
// a `pull_request` run from a fork, and a `pull_request_review` or
// `pull_request_review_comment` run on a fork's pull request, get a read-only
// GITHUB_TOKEN and no secrets (`pull_request_target` runs in the base
// repository and may write).
func (a *Actions) ReadOnlyToken() bool {
	return a.InActions && a.Fork && forkReadOnly[a.EventName]
}

// forkReadOnly are the events whose runs on a fork's pull request get a
// read-only token ("Events that trigger workflows": pull_request,
// pull_request_review, pull_request_review_comment, "Workflows in forked
// repositories").
var forkReadOnly = map[string]bool{"pull_request": true, "pull_request_review": true, "pull_request_review_comment": true}

// Mask asks the runner to replace secret with *** in every later log line.
func (a *Actions) Mask(secret string) {
	if a.InActions && strings.TrimSpace(secret) != "" {
		a.gha.AddMask(secret)
	}
}

// Warning prints a ::warning:: (a plain line on w outside Actions).
func (a *Actions) Warning(msg string) { a.command("warning", msg, nil) }

// Notice prints a ::notice::.
func (a *Actions) Notice(msg string) { a.command("notice", msg, nil) }

// command prints a workflow command, the one writer of every ::error::,
// ::warning:: and ::notice:: the tool prints (Warning, Notice, Annotate; the
// other commands are the mask and the file commands); the message is never
// used as a format string. The message and the properties carry data (ids,
// keys, file names, a server's error text), and each goes through
// CommandText.
func (a *Actions) command(level, msg string, fields map[string]string) {
	if !a.InActions {
		return
	}
	msg = CommandText(msg)
	g := a.gha
	if len(fields) > 0 {
		guarded := make(map[string]string, len(fields))
		for k, v := range fields {
			guarded[k] = CommandText(v)
		}
		g = g.WithFieldsMap(guarded)
	}
	switch level {
	case "error":
		g.Errorf("%s", msg)
	case "warning":
		g.Warningf("%s", msg)
	default:
		g.Noticef("%s", msg)
	}
}

// CommandText is s as a workflow command writes it, its message or a
// property: bidi controls and the other invisible characters become a
// visible (U+XXXX), an ANSI escape and the other control characters but the
// line ends and the tab an escape (format.Visible: a server's error text
// holding U+202E cannot make the log line read otherwise than it says), and
// then "##[", the runner's legacy syntax, which it finds anywhere in a line,
// gets its backslash there as in every other line the commands print
// (guard.Text; the command's escaping turns line ends into %0A, so the whole
// command is one line). A check run's annotations take format.Visible alone
// (publish's fitAnnotation): they are no log line.
func CommandText(s string) string { return guard.Text(format.Visible(s)) }

// Annotation is a problem located in a file, shown on the PR's diff and the run page.
type Annotation struct {
	File    string // path as the user gave it; made relative to GITHUB_WORKSPACE
	Line    int    // 1-based; 0 means the whole file
	Title   string
	Message string
}

// MaxAnnotations is how many annotations Annotate issues before summarising the rest.
// GitHub itself shows at most 10 error annotations per step and 50 per job.
const MaxAnnotations = 50

// Annotate issues one ::<level> file=…,line=…,title=…:: command per annotation (level
// is error, warning or notice), at most max of them, then a notice that counts the
// rest of total (the number of problems anns was taken from; at least len(anns)).
// It returns how many were issued.
func (a *Actions) Annotate(level string, anns []Annotation, total int64, max int, restWhere string) int {
	if !a.InActions || (len(anns) == 0 && total <= 0) {
		return 0
	}
	if max < 0 {
		max = 0
	}
	n := 0
	for _, an := range anns {
		if n == max {
			break
		}
		fields := map[string]string{}
		if an.File != "" {
			fields["file"] = a.RelPath(an.File)
			if an.Line > 0 {
				fields["line"] = strconv.Itoa(an.Line)
			}
		}
		if an.Title != "" {
			fields["title"] = an.Title
		}
		a.command(level, an.Message, fields)
		n++
	}
	if rest := maxInt64(total, int64(len(anns))) - int64(n); rest > 0 {
		a.Notice(fmt.Sprintf("%s not annotated (at most %d are); %s", format.Count(rest, "more problem", "more problems"), max, restWhere))
	}
	return n
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// RelPath makes p relative to GITHUB_WORKSPACE, as annotations need
// (relpath.Rel; "" and "-", standard input, as given). A path outside the
// workspace, or any path when the workspace is unknown, is returned cleaned.
// Relative paths are taken relative to the working directory, which in a
// Docker action is the workspace.
func (a *Actions) RelPath(p string) string {
	if p == "" || p == "-" {
		return p
	}
	return relpath.Rel(a.Workspace, p)
}

// InWorkspace reports whether p lies inside GITHUB_WORKSPACE (false when the
// workspace is unknown): only such paths are seen by the next step of a Docker
// action, which mounts the workspace alone.
func (a *Actions) InWorkspace(p string) bool {
	if a.Workspace == "" || p == "" || p == "-" {
		return false
	}
	return !filepath.IsAbs(filepath.FromSlash(a.RelPath(p))) && !strings.HasPrefix(a.RelPath(p), "../")
}

// ErrNoFile says the runner gave no file for a file command (GITHUB_OUTPUT or
// GITHUB_STEP_SUMMARY unset).
var ErrNoFile = errors.New("the runner set no file for it")

// outputDelimiter is the fixed delimiter go-githubactions writes around each
// value in GITHUB_OUTPUT (NAME<<DELIMITER, the value, DELIMITER).
const outputDelimiter = "_GitHubActionsFileCommandDelimeter_"

// SetOutputs writes step outputs to GITHUB_OUTPUT, in sorted key order. The
// file holds each value between two lines of a fixed delimiter, so a value with
// a line break could end its own and set other outputs, and a value that is
// the delimiter ends its own at once and leaves a line the runner cannot read,
// failing the step: such a value (a path with a newline in it, or named after
// the delimiter) is not set, and the error names its output; the others are.
func (a *Actions) SetOutputs(outputs map[string]string) error {
	if !a.InActions || len(outputs) == 0 {
		return nil
	}
	if a.OutputFile == "" {
		return fmt.Errorf("failed to set step outputs: GITHUB_OUTPUT: %w", ErrNoFile)
	}
	keys := make([]string, 0, len(outputs))
	var refused, delimited []string
	for k, v := range outputs {
		switch {
		case strings.ContainsAny(k+v, "\r\n"):
			refused = append(refused, strconv.Quote(k))
		case strings.Contains(k+v, outputDelimiter):
			delimited = append(delimited, strconv.Quote(k))
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if err := notAPipe("GITHUB_OUTPUT", a.OutputFile); err != nil {
		return fmt.Errorf("failed to set step outputs: %w", err)
	}
	err := fileCommand("set step outputs", func() {
		for _, k := range keys {
			a.gha.SetOutput(k, outputs[k])
		}
	})
	if err != nil {
		return err
	}
	var errs []error
	if len(refused) > 0 {
		sort.Strings(refused)
		errs = append(errs, fmt.Errorf("step output %s not set: its value holds a line break, which would end it early in GITHUB_OUTPUT", strings.Join(refused, ", ")))
	}
	if len(delimited) > 0 {
		sort.Strings(delimited)
		errs = append(errs, fmt.Errorf("step output %s not set: its value holds the file's delimiter %s, which would end it early in GITHUB_OUTPUT", strings.Join(delimited, ", "), outputDelimiter))
	}
	return errors.Join(errs...)
}

// MaxSummaryBytes is GitHub's limit on a step's job summary (1 MiB).
const MaxSummaryBytes = 1 << 20

// SummaryRoom is how many bytes may still be appended to this step's job summary.
func (a *Actions) SummaryRoom() int {
	room := MaxSummaryBytes - 2 // the trailing newline the command adds, and one spare
	if fi, err := os.Stat(a.StepSummary); err == nil {
		room -= int(fi.Size())
	}
	if room < 0 {
		room = 0
	}
	return room
}

// AppendSummary appends Markdown to the job summary. The caller fits it to
// SummaryRoom first (see Fit); AppendSummary refuses rather than exceed the limit.
func (a *Actions) AppendSummary(markdown string) error {
	if !a.InActions {
		return nil
	}
	if a.StepSummary == "" {
		return fmt.Errorf("failed to write the job summary: GITHUB_STEP_SUMMARY: %w", ErrNoFile)
	}
	if room := a.SummaryRoom(); len(markdown) > room {
		return fmt.Errorf("failed to write the job summary: %d bytes do not fit the %d left of GitHub's 1 MiB", len(markdown), room)
	}
	if err := notAPipe("GITHUB_STEP_SUMMARY", a.StepSummary); err != nil {
		return fmt.Errorf("failed to write the job summary: %w", err)
	}
	return fileCommand("write the job summary", func() { a.gha.AddStepSummary(markdown) })
}

// notAPipe refuses a file command's file that is a named pipe: opening one to
// write waits for a reader, and a signal cannot end that wait (the runner's
// own files are regular files; /dev/null and the like are not refused).
func notAPipe(name, path string) error {
	if st, err := os.Stat(path); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		return fmt.Errorf("%s %s is a named pipe, not a file", name, path)
	}
	return nil
}

// fileCommand turns go-githubactions' panics on file commands into errors.
func fileCommand(what string, fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("failed to %s: %w", what, e)
				return
			}
			err = fmt.Errorf("failed to %s: %v", what, r)
		}
	}()
	fn()
	return nil
}
