// Command shoot takes a PNG screenshot of a report page in headless Chromium
// (scripts/screenshots runs it for the README images). A .md input is first
// rendered as GitHub renders a PR comment (browsertest.GitHubComment).
//
//	go run ./internal/browsertest/shoot -width 850 -max-height 1400 [-dark] -o out.png report.(html|md)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
)

func main() {
	width := flag.Int("width", browsertest.CommentColumn, "viewport width, CSS px")
	maxHeight := flag.Int("max-height", 0, "cut the image at this height (0: the whole page)")
	dark := flag.Bool("dark", false, "prefers-color-scheme: dark")
	out := flag.String("o", "", "the PNG to write (required)")
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: shoot [-width N] [-max-height N] [-dark] -o OUT.png IN.html|IN.md")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out, *width, *maxHeight, *dark); err != nil {
		fmt.Fprintln(os.Stderr, "shoot:", err)
		os.Exit(1)
	}
}

func run(in, out string, width, maxHeight int, dark bool) error {
	page := in
	if strings.HasSuffix(in, ".md") {
		md, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		html, err := browsertest.GitHubComment(filepath.Base(in), md)
		if err != nil {
			return err
		}
		f, err := os.CreateTemp("", "shoot-*.html")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		if _, err := f.Write(html); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		page = f.Name()
	}
	path, err := browsertest.Find()
	if err != nil {
		return err
	}
	b, err := browsertest.Launch(path)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := b.Load(ctx, page, browsertest.Options{Width: width, Screenshot: true, Dark: dark, MaxHeight: maxHeight})
	if err != nil {
		return err
	}
	for _, e := range m.ConsoleErrors {
		fmt.Fprintln(os.Stderr, "shoot: console error:", e)
	}
	return os.WriteFile(out, m.PNG, 0o644) //nolint:gosec // G306: a screenshot the user asked for, readable like the reports it shows
}
