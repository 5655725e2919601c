package cli

// report --from: a saved --json document of check, compare or calibrate,
// rendered again (text on stdout, --markdown, --html).

import (
	"context"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/report"
)

// fromOptions are report's flags in --from mode.
type fromOptions struct {
	from, markdownOut, htmlOut, commentKey string
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
	return report.Read(ctx, input.Reader(ctx, f), path)
}

// runFrom renders the document of o.from: the text report on stdout, and the
// Markdown and HTML files asked for (all or none). The document's verdict does
// not set the exit code: this re-renders a report, it gates nothing.
func runFrom(ctx context.Context, env *Env, o fromOptions) error {
	if o.commentKey != "" && !publish.ValidKey(o.commentKey) {
		return o.src.refuse("report", "comment-key", "must be 1 to 100 characters of A-Z a-z 0-9 . _ / -")
	}
	if err := refuseOverwrite("report", o.src, []file{{"from", o.from}}, []file{{"markdown", o.markdownOut}, {"html", o.htmlOut}}); err != nil {
		return err
	}
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
	if ws[1] != nil && doc.Command() != "check" {
		return usagef("report: %s: %v", o.src.name("html"), doc.WriteHTML(io.Discard)) // says why, writes nothing
	}
	doc.CommentKey = o.commentKey
	if err := atomicfile.Render(ws, doc.WriteMarkdown, doc.WriteHTML); err != nil {
		return err
	}
	if err := outs.Commit(); err != nil {
		return err
	}
	return doc.WriteText(env.Stdout)
}
