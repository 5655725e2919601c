// Package gate is retrieval-gate as a Go library: the gate of `retrieval-gate
// check`, callable from a Go test.
//
// [Check] scores a cases file against a knowledge base and decides the gates,
// exactly as `retrieval-gate check` does. The cases are JSON Lines, one case
// per line with its gold card ids and its retrieved list; the knowledge base is
// a JSON Lines file of cards or a directory of Markdown cards (both described
// in docs/formats.md, section "Cases"). The [Report] renders as the command's
// outputs: [Report.WriteJSON] writes the bytes of `check --json`,
// [Report.WriteMarkdown] the PR comment body of `check --markdown`,
// [Report.WriteText] the terminal report ([Report.WriteTextVerbose] that of
// `check --verbose`) and [Report.WriteHTML] the page of `check --html`.
//
// [Live] is the live gate. Check judges a run file someone produced earlier,
// which says nothing once the knowledge base, its chunking, the store or the
// embedder have changed since. Live instead indexes the knowledge base as it is
// now, runs each case's query through the retrieval stack named in
// [LiveOptions] (any registered store and embedder: the in-process store and
// the built-in hash embedder by default, so it runs offline in a plain `go
// test`; Chroma and a real embedding model for the production path) and checks
// what comes back against the cases' gold. A change anywhere in that stack that
// stops the right cards from being retrieved then fails the test that calls
// it, before the change is merged: the gate is on the retrieval system, not on
// a file.
//
// The package reads no environment variable, publishes nothing (no PR
// comment, no step output), keeps no global state and takes a context
// everywhere; it is safe for concurrent use by independent calls. The
// command-line tool and this package share one pipeline: the same option
// resolution, the same defaults and the same run, so a registered store or
// embedder reaches both, and a report here equals the command's.
//
// What the package returns is safe to print in a CI log the GitHub Actions
// runner reads: the text report is written through the command's guard, and
// the text of every error of [LoadKB], [Check], [Live] and
// [LiveOptions.Resolve] (and of report.Read) is guarded the same way, so data
// an error quotes (a key, an id, an option's value) cannot forge a workflow
// command when a test prints it with t.Fatal(err): "::" at a line start gets
// a backslash before it, "##[" anywhere a backslash before its "[". The errors
// unwrap to the causes they guard (errors.Is and errors.As see through them).
//
// # Compatibility
//
// The package follows semantic versioning from its first tagged release
// (v1.x.y): within a major version, the exported identifiers of this package
// and of package report keep their names, signatures and meaning, and new
// ones may be added (fields of Options, LiveOptions, Gate, Group and Measure
// included; construct them with field names). What may change in a minor
// release: the wording of Gate.Reason, of errors and of the Markdown, text
// and HTML reports, new gates, groups and measures in a report, new members of
// the JSON document (its schema string names breaking changes of the document
// itself), and the numbers where a documented statistic is corrected. Until
// the first tag, the checked-in snapshot api/gate.txt is the baseline that CI
// and `go test` compare the exported API against (see docs/library.md).
package gate
