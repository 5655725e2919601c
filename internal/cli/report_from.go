package cli

// report --from: a saved --json document of check, compare or calibrate,
// rendered again (text on stdout, --markdown, --html).

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/report"
)

// fromOptions are report's flags in --from mode.
type fromOptions struct {
	from, markdownOut, htmlOut, commentKey string
	verbose                                bool // --verbose: check's whole terminal report
	src                                    *sources
}

// readDocument reads a --json document of check, compare or calibrate
// (report.Read). A malformed file is reported at its line.
func readDocument(ctx context.Context, path string) (*report.Document, error) {
	f, err := input.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the document: %w", err)
	}
	defer f.Close()
	doc, err := report.Read(ctx, input.Reader(ctx, f), path)
	return doc, notDocument(path, err) // a cases file, a history, …: says what it is
}

// runFrom renders the document of o.from: the text report on stdout, and the
// Markdown and HTML files asked for (all or none), with o as parseReport
// validated it. The document's verdict does
// not set the exit code: this re-renders a report, it gates nothing.
func runFrom(ctx context.Context, env *Env, o fromOptions) error {
	outs := atomicfile.NewSet()
	defer outs.Abort()
	ws, err := outs.AddAll(o.markdownOut, o.htmlOut)
	if err != nil {
		return err
	}
	doc, err := readDocument(ctx, o.from)
	if err != nil {
		return err
	}
	if ws[1] != nil && doc.Command() == "calibrate" {
		return usagef("report: %s: %v", o.src.name("html"), doc.WriteHTML(io.Discard)) // says why, writes nothing
	}
	doc.CommentKey = o.commentKey
	if o.commentKey != "" { // a document whose Markdown has no marker (compare's) refuses the key
		if err := doc.WriteMarkdown(io.Discard); errors.Is(err, report.ErrNoMarker) {
			return usagef("report: %s: %v", o.src.name("comment-key"), err) // says why, writes nothing
		}
	}
	text := doc.WriteText
	if o.verbose {
		if doc.Command() != "check" {
			return usagef("report: --verbose is check's (its whole terminal report); %s is a %s report", o.from, doc.Command())
		}
		text = doc.WriteTextVerbose // check --verbose's text of the document
	}
	if err := atomicfile.Render(ws, doc.WriteMarkdown, doc.WriteHTML); err != nil {
		return err
	}
	if err := printText(outs, env, text); err != nil {
		return err
	}
	return outs.Commit(ctx)
}
