// Package cli holds the commands of retrieval-gate, their flags and Action inputs,
// and the one mapping from errors to exit codes (exit.go).
//
// Every command has the same shape: parse(env, args) turns the command line (and,
// inside GitHub Actions, the Action inputs the command declares) into an options
// struct, validated, touching nothing; run(ctx, f, opts) does the work with the
// services of a Factory, built lazily. Parsing is tested alone; runs get fakes
// through the Factory.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/retrieval-gate/retrieval-gate/internal/ctxwrite"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/guard"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/progress"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

// Env is everything a command may touch of the process, so commands run in tests
// without a process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// OSEnv is the Env of the running process.
func OSEnv() *Env {
	return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

// Factory holds the services of a run. Env's Stdout and Stderr are guarded (no
// line of data can be read by the runner as a workflow command); the publisher
// alone writes workflow commands, to the real stdout, and the progress bar
// alone draws on the terminal, the real stderr.
type Factory struct {
	Env *Env
	// Comments builds the GitHub client of the PR comment; nil is the real API.
	Comments publish.CommentsFactory
	// Sleep replaces the waits of the PR comment's retries (tests); nil sleeps.
	Sleep func(ctx context.Context, d time.Duration) error

	// rawStdout is where the workflow commands go (the real stdout, unguarded),
	// rawStderr the real stderr: the commands' stream when stdout carries an
	// output (commandsOnStderr).
	rawStdout, rawStderr io.Writer
	// terminal is the real stderr when it is a terminal (the progress bar's),
	// else nil.
	terminal  *progress.Terminal
	guards    []*guard.Writer
	publisher publish.Target
	// given are secrets a command was given on its command line (a Chroma
	// key), shared with the Factories of its stages.
	given *[]string
	// prov is the run's provenance once read (provenance.go), shared with
	// the Factories of its stages.
	prov *provenanceOnce
}

// newFactory guards env's output streams and returns the Factory of a run;
// env's Stderr is a terminal when stderr, the stream it was made from, is one
// (Run asks it of the stream it was given, before it wraps it).
func newFactory(env *Env, stderr io.Writer) *Factory {
	out, errw := guard.NewWriter(env.Stdout), guard.NewWriter(env.Stderr)
	guarded := *env
	guarded.Stdout, guarded.Stderr = out, errw
	return &Factory{Env: &guarded, rawStdout: env.Stdout, rawStderr: env.Stderr, terminal: progress.TerminalOf(stderr, env.Stderr),
		guards: []*guard.Writer{out, errw}, given: new([]string), prov: new(provenanceOnce)}
}

// Publisher is the run's publisher, built on first use and chosen from the
// environment: a GitLab CI job's (GITLAB_CI=true, the merge-request note) or
// GitHub Actions' (everything else: outside both it prints warnings only).
func (f *Factory) Publisher() publish.Target {
	if f.publisher == nil {
		if inGitLab(f.Env.Getenv) {
			f.publisher = &publish.GitLabPublisher{CI: gitlabCI(f.Env.Getenv), Stderr: f.Env.Stderr, Sleep: f.Sleep}
		} else {
			f.publisher = &publish.Publisher{Getenv: f.Env.Getenv, Stdout: f.rawStdout, Stderr: f.Env.Stderr, Comments: f.Comments, Sleep: f.Sleep}
		}
	}
	return f.publisher
}

// commandsOnStderr sends the workflow commands (an Action's mask, outputs'
// warnings, annotations, errors) to the real stderr: for a command whose
// standard output is an output file (import --out -), which a workflow command
// there would corrupt (and ::add-mask:: would write the token into). The
// runner reads the commands of both streams. Called before anything is
// published.
func (f *Factory) commandsOnStderr() {
	if f.rawStderr != nil {
		f.rawStdout, f.publisher = f.rawStderr, nil
	}
}

// flush writes what the guards hold back.
func (f *Factory) flush() {
	for _, g := range f.guards {
		_ = g.Flush()
	}
}

// secrets are redacted from every message the process prints.
func (f *Factory) secrets() []string {
	g := f.Env.Getenv
	s := []string{publish.Token(g), g("GITHUB_TOKEN"), g("GITLAB_TOKEN"), g("CI_JOB_TOKEN"), g("OPENAI_API_KEY"), g(llm.APIKeyEnv), g("CHROMA_API_KEY")}
	for _, p := range llm.Providers { // the batch providers' keys (ANTHROPIC_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY)
		for _, name := range llm.ProviderKeyEnv[p] {
			s = append(s, g(name))
		}
	}
	if v, ok := actionInput(f.Env, "chroma-api-key"); ok {
		s = append(s, v)
	}
	if f.given != nil {
		s = append(s, *f.given...)
	}
	return s
}

// secret records a secret given to the command (redacted from every message)
// and, inside Actions, masks it in the log.
func (f *Factory) secret(v string) {
	if strings.TrimSpace(v) == "" {
		return
	}
	if f.given == nil {
		f.given = new([]string)
	}
	if slices.Contains(*f.given, v) {
		return // recorded and masked once (evaluate's stages record their URLs' again)
	}
	*f.given = append(*f.given, v)
	// ReadActions' error is about the event file; the mask needs none of it.
	if act, _ := github.ReadActions(f.Env.Getenv, f.rawStdout); act != nil {
		act.Mask(v)
	}
}

// urlSecrets records the credentials of the server URLs a command was given
// (their user information, a credential query parameter: httpretry.URLSecrets)
// as its secrets (secret). A URL in a message loses them (RedactURLsIn), and
// each client removes them from its own errors, but a server may echo them
// bare into what the command quotes of its answer outside the client's own
// words (a key of a malformed answer, a result line of a batch): redacted
// there too, from every message and the judge's report, and masked in an
// Action's log.
func (f *Factory) urlSecrets(urls ...string) {
	for _, u := range urls {
		for _, s := range httpretry.URLSecrets(u) {
			f.secret(s)
		}
	}
}

// stage is the Factory of a command run by another (evaluate's stages): the same
// services, but no Action input reaches it (the outer command passes every flag
// it means), except the token of the PR comment.
func (f *Factory) stage() *Factory {
	cp := *f
	env := *f.Env
	get := f.Env.Getenv
	env.Getenv = func(k string) string {
		if strings.HasPrefix(k, "INPUT_") && k != "INPUT_GITHUB-TOKEN" {
			return ""
		}
		return get(k)
	}
	cp.Env, cp.publisher = &env, nil
	return &cp
}

// Command is one subcommand: its name and synopsis, and its run on the
// arguments after its name, with the services of the Factory it was made with.
type Command struct {
	Name, Synopsis string
	Run            func(ctx context.Context, args []string) error
}

// newCommand is the Command of a parse and a run, as cli/cli's NewCmdX(f,
// runF): parse(env, args) turns the arguments into the options, touching
// nothing; run (runF when set: a test of the parsing alone) does the work.
func newCommand[O any](f *Factory, name, synopsis string, parse func(*Env, []string) (O, error), run, runF func(context.Context, O) error) *Command {
	if runF != nil {
		run = runF
	}
	return &Command{Name: name, Synopsis: synopsis, Run: func(ctx context.Context, args []string) error {
		o, err := parse(f.Env, args)
		if err != nil {
			return withUsage(name, err)
		}
		return run(ctx, o)
	}}
}

// commands are the subcommands, by name, with the services of f; each lives
// in its own file.
func commands(f *Factory) []*Command {
	return []*Command{NewCmdCalibrate(f, nil), NewCmdCheck(f, nil), NewCmdCompare(f, nil), NewCmdEvaluate(f, nil), NewCmdGenerate(f, nil),
		NewCmdImport(f, nil), NewCmdJudge(f, nil), NewCmdReport(f, nil), NewCmdRetrieve(f, nil)}
}

// Run dispatches args to a subcommand and returns the process exit code. A
// write to env's Stdout or Stderr that its reader does not take is given up
// once ctx has ended (ctxwrite.Until): a signal stops the command also then.
func Run(ctx context.Context, env *Env, args []string) int {
	return RunFactory(ctx, runFactory(ctx, env), args)
}

// runFactory is the Factory of a run of Run under ctx: env's Stdout and
// Stderr bound to ctx (ctxwrite.Until), and the progress bar drawn on Stderr,
// through that bound writer, when env's own Stderr is a terminal (the bound
// writer is no *os.File: the terminal is detected before it is wrapped).
func runFactory(ctx context.Context, env *Env) *Factory {
	e := *env
	e.Stdout, e.Stderr = ctxwrite.Until(ctx, env.Stdout), ctxwrite.Until(ctx, env.Stderr)
	return newFactory(&e, env.Stderr)
}

// RunFactory is Run with the services of f.
func RunFactory(ctx context.Context, f *Factory, args []string) int {
	defer f.flush()
	err := dispatch(ctx, f, args)
	err = lateInterruption(ctx, args, err)
	err = interrupted(ctx, args, err)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		var ge *GateError
		if !errors.As(err, &ge) {
			msg := format.Clean(httpretry.RedactText(err.Error(), f.secrets()...))
			// Inside Actions an input error is an ::error:: annotation (at its
			// file and line when it names them) and a job-summary entry; the
			// annotation is the log's one line about it. The file is redacted
			// as the message is: it may be a name a server gave (a batch's
			// results URL, signed in its query).
			file, line := input.Location(err)
			file = httpretry.RedactText(file, f.secrets()...)
			stopped := ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, ctxwrite.ErrInterrupted))
			if !f.Publisher().Fail(publish.Failure{Command: commandName(args), Message: msg, File: file, Line: line, Interrupted: stopped}) {
				fmt.Fprintf(f.Env.Stderr, "retrieval-gate: %s\n", msg)
				// The command's usage under a usage error on a terminal; in a
				// CI job the annotation is the log's one line about it.
				var ue *UsageError
				if errors.As(err, &ue) && ue.Usage != "" {
					fmt.Fprint(f.Env.Stderr, ue.Usage)
				}
			}
		}
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	return ExitCode(err)
}

// interrupted words an error that the run's end (SIGINT, SIGTERM) caused as
// every command words it: "check: interrupted: failed to read stdin: context
// canceled". The commands that say more (generate, judge, retrieve, evaluate's
// stages, calibrate: "interrupted, nothing written": interruptedf) and a
// write given up on an unread stream (ctxwrite.ErrInterrupted) keep their
// words.
func interrupted(ctx context.Context, args []string, err error) error {
	if err == nil || ctx.Err() == nil || !errors.Is(err, context.Canceled) ||
		errors.As(err, new(interruptedError)) || errors.Is(err, ctxwrite.ErrInterrupted) {
		return err
	}
	if name := commandName(args); name != "" {
		return fmt.Errorf("%s: interrupted: %w", name, err)
	}
	return fmt.Errorf("interrupted: %w", err)
}

// lateInterruption is the error of a run that SIGINT or SIGTERM ended after
// its files were written, while it published (a PR or MR comment, a check run,
// the job summary): the publisher gave up with a warning, and the run would
// have exited 0 (or 1, a gate's failure) as if it had completed. It exits 2,
// as every interrupted run does.
func lateInterruption(ctx context.Context, args []string, err error) error {
	if ctx.Err() == nil || (err != nil && !errors.As(err, new(*GateError))) {
		return err
	}
	name := commandName(args)
	if name == "" {
		name = "retrieval-gate"
	}
	return interruptedf("%s: interrupted after its files were written: what it publishes to the CI host (a comment, a check run, the job summary, its outputs) may be missing: %w", name, ctx.Err())
}

// interruptedError is a command's own wording of its interruption
// (interruptedf), which interrupted leaves as it is.
type interruptedError struct{ error }

func (e interruptedError) Unwrap() error { return e.error }

// interruptedf is fmt.Errorf for a command's own wording of its interruption
// ("judge: interrupted, nothing written …: %w").
func interruptedf(format string, a ...any) error {
	return interruptedError{fmt.Errorf(format, a...)}
}

func dispatch(ctx context.Context, f *Factory, args []string) error {
	env := f.Env
	if len(args) == 0 {
		printUsage(env.Stderr)
		return usagef("missing command")
	}
	name := args[0]
	switch name {
	case "help":
		if len(args) > 1 { // help COMMAND: the command's own help
			for _, c := range commands(f) {
				if c.Name == args[1] {
					return c.Run(ctx, []string{"--help"})
				}
			}
			printUsage(env.Stderr)
			return usagef("help: unknown command %q", format.Clean(args[1]))
		}
		printUsage(env.Stdout)
		return flag.ErrHelp
	case "-h", "-help", "--help":
		printUsage(env.Stdout)
		return flag.ErrHelp
	case "-version", "--version", "version":
		fmt.Fprintln(env.Stdout, "retrieval-gate", version())
		return nil
	}
	for _, c := range commands(f) {
		if c.Name == name {
			return c.Run(ctx, args[1:])
		}
	}
	printUsage(env.Stderr)
	return usagef("unknown command %q", format.Clean(name))
}

// commandName is the subcommand of args, "" when args name none.
func commandName(args []string) string {
	for _, c := range commands(nil) {
		if len(args) > 0 && c.Name == args[0] {
			return c.Name
		}
	}
	return ""
}

// Version is set at build time with -ldflags "-X .../cli.Version=v1.2.3".
var Version = "dev"

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: retrieval-gate <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands(nil) {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, c.Synopsis)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'retrieval-gate help <command>' (or 'retrieval-gate <command> --help') for the flags of a command.")
}

// newFlagSet returns a FlagSet that reports errors as values (never exits) and
// prints nothing itself: parseFlags words its errors (usage.go: the flag, what
// it wants, the nearest flag, the short usage) and prints --help.
func newFlagSet(_ *Env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// actionInputs are the GitHub Action inputs a command declares: each is the flag
// of the same name, mapped to its default inside Actions ("" keeps the flag's
// default). An INPUT_* reaches a command only when the command declares it, and an
// empty input is unset: action.yml gives every input but `command` and
// `github-token` an empty default, so one command's defaults never reach another.
type actionInputs map[string]string

// parseFlags parses args, then, inside GitHub Actions, fills every declared input
// not given on the command line from INPUT_<NAME> (as the runner sets them), or,
// when the binary runs as the Action (asActionStep), from its Actions default:
// flags win over inputs. The binary run in a workflow's run: step keeps its
// flags' own defaults (check.md's --json is none there too). The sources it
// returns name each value where it came from, for the checks after parsing.
func parseFlags(fs *flag.FlagSet, env *Env, args []string, inputs actionInputs) (*sources, error) {
	src := &sources{fs: fs, inputs: map[string]string{}, stdin: env.Stdin}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeHelp(env.Stdout, fs)
			return nil, err
		}
		return nil, flagError(fs, err)
	}
	if fs.NArg() > 0 {
		return nil, &UsageError{Msg: fmt.Sprintf("%s: unexpected argument %q (every argument is a flag)", fs.Name(), format.Clean(fs.Arg(0))), Usage: shortUsage(fs.Name())}
	}
	if env.Getenv("GITHUB_ACTIONS") != "true" {
		return src, nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	names := make([]string, 0, len(inputs))
	for name := range inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if fs.Lookup(name) == nil {
			panic(fmt.Sprintf("%s declares the Action input %q, which is not one of its flags", fs.Name(), name))
		}
		if set[name] {
			continue
		}
		v, ok := actionInput(env, name)
		if !ok {
			if v = inputs[name]; v == "" || !asActionStep(env) {
				continue
			}
			src.defaulted(name)
		}
		if e := fs.Set(name, v); e != nil {
			return nil, inputValueError(fs.Lookup(name), v, e)
		}
		src.inputs[name] = v
	}
	return src, nil
}

// asActionStep says whether the binary runs as the Action (uses:
// retrieval-gate/…): the runner then sets INPUT_COMMAND from action.yml, whose
// `command` input always has a value (check by default). A run: step, or
// uses: docker://… without it, sets no such input.
func asActionStep(env *Env) bool { return env.Getenv("INPUT_COMMAND") != "" }

// actionInput reads an Action input as the runner passes it (INPUT_ + the
// upper-cased name, spaces as underscores, hyphens kept), with go-githubactions'
// GetInput. Empty means unset.
func actionInput(env *Env, name string) (string, bool) {
	v := githubactions.New(githubactions.WithGetenv(env.Getenv)).GetInput(name)
	return v, v != ""
}
