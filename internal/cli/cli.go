// Package cli holds the commands of retrieval-gate, their flags and Action inputs,
// and the one mapping from errors to exit codes (exit.go).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/sethvargo/go-githubactions"
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

// Command is one subcommand.
type Command interface {
	Name() string
	Synopsis() string
	Run(ctx context.Context, env *Env, args []string) error
}

// commands lists every subcommand; each lives in its own file.
var commands = []Command{
	&CheckCommand{},
	&RetrieveCommand{},
	&CompareCommand{},
	&CalibrateCommand{},
	&ImportCommand{},
	&JudgeCommand{}, &GenerateCommand{}, &EvaluateCommand{},
}

// Run dispatches args to a subcommand and returns the process exit code.
func Run(ctx context.Context, env *Env, args []string) int {
	err := dispatch(ctx, env, args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		var ge *GateError
		if !errors.As(err, &ge) {
			fmt.Fprintf(env.Stderr, "retrieval-gate: %v\n", err)
		}
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	return ExitCode(err)
}

func dispatch(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		printUsage(env.Stderr)
		return usagef("missing command")
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		printUsage(env.Stdout)
		return flag.ErrHelp
	case "-version", "--version", "version":
		fmt.Fprintln(env.Stdout, "retrieval-gate", Version)
		return nil
	}
	for _, c := range commands {
		if c.Name() == name {
			return c.Run(ctx, env, args[1:])
		}
	}
	printUsage(env.Stderr)
	return usagef("unknown command %q", name)
}

// Version is set at build time with -ldflags "-X .../cli.Version=v1.2.3".
var Version = "dev"

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: retrieval-gate <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	byName := map[string]Command{}
	for _, c := range commands {
		names = append(names, c.Name())
		byName[c.Name()] = c
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, byName[n].Synopsis())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'retrieval-gate <command> --help' for the flags of a command.")
}

// newFlagSet returns a FlagSet that reports errors as values (never exits) and
// writes its usage to stderr.
func newFlagSet(env *Env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}

// parseFlags parses args, then fills every flag not given on the command line from
// its GitHub Action input (INPUT_<NAME>, as the runner sets them) when running inside
// GitHub Actions: flags win over inputs.
func parseFlags(fs *flag.FlagSet, env *Env, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	if env.Getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		v, ok := actionInput(env, f.Name)
		if !ok {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = usagef("action input %q: %v", f.Name, e)
		}
	})
	return err
}

// actionInput reads an Action input as the runner passes it (INPUT_ + the
// upper-cased name, spaces as underscores, hyphens kept), with go-githubactions'
// GetInput. Empty means unset.
func actionInput(env *Env, name string) (string, bool) {
	v := githubactions.New(githubactions.WithGetenv(env.Getenv)).GetInput(name)
	return v, v != ""
}
