package githubtest

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
)

// State is what a fake API holds between runs of Main.
type State struct {
	PRs      []int     `json:"prs"`
	Comments []Comment `json:"comments"`
	NextID   int64     `json:"next_id"`
	// CheckRuns are the check runs (checks.go), with their annotations.
	CheckRuns []CheckRun `json:"check_runs,omitempty"`
}

// Export returns the server's state.
func (s *Server) Export() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{NextID: s.nextID}
	for pr := range s.prs {
		st.PRs = append(st.PRs, pr)
	}
	sort.Ints(st.PRs)
	for _, c := range s.comments {
		st.Comments = append(st.Comments, *c)
	}
	for _, c := range s.checks.runs {
		st.CheckRuns = append(st.CheckRuns, *c)
	}
	return st
}

// Import replaces the server's pull requests and comments.
func (s *Server) Import(st State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prs = map[int]bool{}
	for _, pr := range st.PRs {
		s.prs[pr] = true
	}
	s.comments = nil
	for i := range st.Comments {
		c := st.Comments[i]
		s.comments = append(s.comments, &c)
	}
	s.checks.runs = nil
	for i := range st.CheckRuns {
		c := st.CheckRuns[i]
		s.checks.runs = append(s.checks.runs, &c)
	}
	s.nextID = max(s.nextID, st.NextID)
}

// Main is a command for end-to-end scripts (register it with testscript):
//
//	fake-github [-state FILE] [-repo owner/name] [-pr N] [-token T] [-readonly]
//	            [-no-minimize] [-fail METHOD[ PATH]:STATUS]... [-artifact SPEC]... [-deny-actions] [-deny-checks]
//	            -- command args...
//
// It starts a fake API, runs the command with GITHUB_API_URL pointing at it, saves
// the pull requests and comments to -state (read back by the next run, so a second
// run sees the first run's comment), prints each request as "fake-github: METHOD
// PATH?QUERY STATUS-of-fault" on stderr, and exits with the command's exit code.
// -artifact stores a workflow run and its artifact (see ArtifactSpec); the blob
// host's requests are printed as "fake-github: blob GET PATH", and one that carries
// an Authorization header makes fake-github exit 3.
func Main() {
	os.Exit(run(os.Args[1:]))
}

type faults []Fault

func (f *faults) String() string { return fmt.Sprint(len(*f)) }

// Set reads METHOD:STATUS, or "METHOD PATH:STATUS" for the requests of
// that path only (without /api/v3; /graphql for GraphQL), e.g.
// "POST /repos/octo/repo/issues/7/comments:502".
func (f *faults) Set(v string) error {
	i := strings.LastIndex(v, ":")
	if i < 0 {
		return errors.New("want METHOD:STATUS or METHOD PATH:STATUS, e.g. POST:502")
	}
	method, path, _ := strings.Cut(v[:i], " ")
	code, err := strconv.Atoi(v[i+1:])
	if err != nil || code < 400 {
		return errors.New("want METHOD:STATUS or METHOD PATH:STATUS, e.g. POST:502")
	}
	var fault Fault
	switch {
	case code == http.StatusTooManyRequests:
		fault = SecondaryRateLimit(method, code, 0)
	default:
		fault = ServerError(method, code)
	}
	fault.Path = path
	*f = append(*f, fault)
	return nil
}

func run(args []string) int {
	fs := flag.NewFlagSet("fake-github", flag.ContinueOnError)
	state := fs.String("state", "", "file holding the pull requests and comments between runs")
	repo := fs.String("repo", "octo/repo", "repository owner/name")
	pr := fs.Int("pr", 7, "an open pull request")
	token := fs.String("token", "", "the accepted token (empty: any)")
	readOnly := fs.Bool("readonly", false, "the token may read but not write (403)")
	noMinimize := fs.Bool("no-minimize", false, "refuse minimizeComment (GraphQL FORBIDDEN)")
	var fl faults
	fs.Var(&fl, "fail", "serve METHOD:STATUS (or METHOD PATH:STATUS) to the next such request (repeatable)")
	var arts artifactSpecs
	fs.Var(&arts, "artifact", "store a run and its artifact: NAME=FILE[,branch=B][,conclusion=C][,event=E][,age=D][,fork=OWNER/NAME][,expired] (repeatable)")
	denyActions := fs.Bool("deny-actions", false, "the token lacks actions: read (403 on /actions/)")
	denyChecks := fs.Bool("deny-checks", false, "the token lacks checks: write (403 on creating or updating a check run)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "fake-github: missing command after --")
		return 2
	}
	owner, name, _ := strings.Cut(*repo, "/")
	srv := New(owner, name, *token, *pr)
	defer srv.Close()
	srv.ReadOnly = *readOnly
	srv.MinimizeForbidden = *noMinimize
	if *state != "" {
		if data, err := os.ReadFile(*state); err == nil {
			var st State
			if err := json.Unmarshal(data, &st); err != nil {
				fmt.Fprintf(os.Stderr, "fake-github: %s: %v\n", *state, err)
				return 2
			}
			st.PRs = append(st.PRs, *pr)
			srv.Import(st)
		} else if !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "fake-github: %v\n", err)
			return 2
		}
	}
	srv.Queue(fl...)
	srv.DenyActions(*denyActions)
	srv.DenyChecks(*denyChecks)
	for _, a := range arts {
		if err := a.add(srv); err != nil {
			fmt.Fprintf(os.Stderr, "fake-github: -artifact %s: %v\n", a.raw, err)
			return 2
		}
	}

	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...) //nolint:gosec // G204: runs the command the test script names, as an argument vector (no shell)
	cmd.Env = append(os.Environ(), "GITHUB_API_URL="+srv.APIURL())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(os.Stderr, "fake-github: %v\n", err)
			return 2
		}
		code = ee.ExitCode()
	}
	for _, r := range srv.Requests() {
		q := ""
		if len(r.Query) > 0 {
			q = "?" + r.Query.Encode()
		}
		fmt.Fprintf(os.Stderr, "fake-github: %s %s%s\n", r.Method, r.Path, q)
	}
	for _, r := range srv.BlobRequests() {
		fmt.Fprintf(os.Stderr, "fake-github: blob GET %s\n", r.Path)
		if r.Auth != "" {
			fmt.Fprintln(os.Stderr, "fake-github: the blob host received an Authorization header")
			code = 3
		}
	}
	if *state != "" {
		data, err := json.MarshalIndent(srv.Export(), "", "  ")
		if err == nil {
			err = os.WriteFile(*state, append(data, '\n'), 0o644) //nolint:gosec // G306: the fake's state for the test script to read, like the outputs it checks
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "fake-github: %v\n", err)
			return 2
		}
	}
	return code
}
