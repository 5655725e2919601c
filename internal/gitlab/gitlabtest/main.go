package gitlabtest

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// State is what a fake GitLab holds between runs of Main.
type State struct {
	Notes  []Note `json:"notes"`
	NextID int64  `json:"next_id"`
}

// Export returns the server's notes.
func (s *Server) Export() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{NextID: s.nextID}
	for _, n := range s.notes {
		st.Notes = append(st.Notes, *n)
	}
	return st
}

// Import replaces the server's notes.
func (s *Server) Import(st State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = nil
	for i := range st.Notes {
		n := st.Notes[i]
		s.notes = append(s.notes, &n)
		s.mrs[n.MR] = true
	}
	s.nextID = max(s.nextID, st.NextID)
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// Main is a command for end-to-end scripts (register it with testscript):
//
//	fake-gitlab [-state FILE] [-project ID] [-project-path PATH] [-mr N] [-token T] [-user NAME] [-job-token T]
//	            [-readonly] [-read-api] [-note USER:BODY]... [-fail METHOD:STATUS]... [-rate-limit METHOD:SECONDS]...
//	            [-baseline REF:JOB=FILE[:STATUS]]... -- command args...
//
// It starts a fake GitLab, runs the command with CI_API_V4_URL and
// CI_SERVER_URL pointing at it, keeps the notes in -state between runs,
// prints each request as "fake-gitlab: METHOD PATH?QUERY [PRIVATE-TOKEN|JOB-TOKEN]"
// on stderr and exits with the command's exit code.
func Main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("fake-gitlab", flag.ContinueOnError)
	state := fs.String("state", "", "file holding the notes between runs")
	project := fs.String("project", "42", "the project id")
	projectPath := fs.String("project-path", "", "the project's full path (group/project), which the API takes as :id too, URL-encoded")
	mr := fs.Int("mr", 7, "an open merge request's iid")
	token := fs.String("token", "", "an accepted access token")
	user := fs.String("user", "project_42_bot", "the access token's user")
	jobToken := fs.String("job-token", "", "the job's CI_JOB_TOKEN")
	readOnly := fs.Bool("readonly", false, "the token may read but not write notes (403)")
	readAPI := fs.Bool("read-api", false, "the token is of the read_api scope: GET only (403 insufficient_scope)")
	var notes, fails, limits, baselines multi
	fs.Var(&notes, "note", "an existing note USER:BODY (repeatable)")
	fs.Var(&fails, "fail", "serve METHOD:STATUS to the next such request (repeatable)")
	fs.Var(&limits, "rate-limit", "serve a 429 with Retry-After SECONDS to the next METHOD request (repeatable)")
	fs.Var(&baselines, "baseline", "a successful pipeline of REF whose job JOB keeps FILE as baseline.jsonl.gz: REF:JOB=FILE[:STATUS] (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "fake-gitlab: missing command after --")
		return 2
	}
	srv := New(*project, *token, *user, *mr)
	defer srv.Close()
	srv.JobToken, srv.ReadOnly, srv.ProjectPath = *jobToken, *readOnly, *projectPath
	if *readAPI && *token != "" {
		srv.ReadAPI[*token] = true
	}
	if *state != "" {
		if data, err := os.ReadFile(*state); err == nil {
			var st State
			if err := json.Unmarshal(data, &st); err != nil {
				fmt.Fprintf(os.Stderr, "fake-gitlab: %s: %v\n", *state, err)
				return 2
			}
			srv.Import(st)
		} else if !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "fake-gitlab: %v\n", err)
			return 2
		}
	}
	for _, n := range notes {
		u, body, _ := strings.Cut(n, ":")
		srv.AddNote(*mr, u, strings.ReplaceAll(body, `\n`, "\n"))
	}
	for _, f := range fails {
		method, status, _ := strings.Cut(f, ":")
		code, err := strconv.Atoi(status)
		if err != nil || code < 400 {
			fmt.Fprintln(os.Stderr, "fake-gitlab: -fail wants METHOD:STATUS")
			return 2
		}
		srv.Queue(ServerError(method, code))
	}
	for _, l := range limits {
		method, secs, _ := strings.Cut(l, ":")
		n, err := strconv.Atoi(secs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake-gitlab: -rate-limit wants METHOD:SECONDS")
			return 2
		}
		srv.Queue(RateLimit(method, time.Now(), n))
	}
	for _, b := range baselines {
		refJob, file, ok := strings.Cut(b, "=")
		ref, job, ok2 := strings.Cut(refJob, ":")
		if !ok || !ok2 {
			fmt.Fprintln(os.Stderr, "fake-gitlab: -baseline wants REF:JOB=FILE[:STATUS]")
			return 2
		}
		status := "success"
		if f, st, ok := strings.Cut(file, ":"); ok {
			file, status = f, st
		}
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fake-gitlab: %v\n", err)
			return 2
		}
		srv.AddPipeline(Pipeline{Ref: ref, Status: status, Files: map[string]map[string][]byte{job: {"baseline.jsonl.gz": data}}})
	}

	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...) //nolint:gosec // G204: runs the command the test script names, as an argument vector (no shell)
	cmd.Env = append(os.Environ(), "CI_API_V4_URL="+srv.APIURL(), "CI_SERVER_URL="+srv.URL)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(os.Stderr, "fake-gitlab: %v\n", err)
			return 2
		}
		code = ee.ExitCode()
	}
	for _, r := range srv.Requests() {
		q := ""
		if len(r.Query) > 0 {
			q = "?" + r.Query.Encode()
		}
		auth := ""
		switch {
		case r.PrivateToken != "":
			auth = " PRIVATE-TOKEN"
		case r.JobToken != "":
			auth = " JOB-TOKEN"
		}
		fmt.Fprintf(os.Stderr, "fake-gitlab: %s %s%s%s\n", r.Method, r.Path, q, auth)
	}
	if *state != "" {
		data, err := json.MarshalIndent(srv.Export(), "", "  ")
		if err == nil {
			err = os.WriteFile(*state, append(data, '\n'), 0o644) //nolint:gosec // G306: the fake's state for the test script to read
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "fake-gitlab: %v\n", err)
			return 2
		}
	}
	return code
}
