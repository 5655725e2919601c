// Package gate is retrieval-gate as a Go library: the gate of `retrieval-gate
// check`, callable from a Go test.
//
// [Check] scores a cases file (JSON Lines, the format of docs/cases.md) against
// a knowledge base and decides the gates, exactly as `retrieval-gate check`
// does: [Report.WriteJSON] writes the bytes of `check --json` and
// [Report.Markdown] the PR comment body of `check --markdown`. [Live] first
// runs the cases' queries against the knowledge base (the embedded in-memory
// store or a Chroma server; dense, lexical or hybrid retrieval) and then checks
// the results, the live gate of ADR-0023 as an integration test.
//
// The package reads no environment variable, publishes nothing (no PR
// comment, no step output), keeps no global state and takes a context
// everywhere; it is safe for concurrent use by independent calls.
//
// # Compatibility
//
// The package follows semantic versioning from its first tagged release
// (v1.x.y): within a major version, the exported identifiers of this package
// and of package report keep their names, signatures and meaning, and new
// ones may be added (fields of Options, LiveOptions, Gate, Group and Measure
// included; construct them with field names). What may change in a minor
// release: the wording of Gate.Reason and of the Markdown and text reports,
// new gates, groups and measures in a report, new members of the JSON
// document (its schema string names breaking changes of the document itself),
// and the numbers where a documented statistic is corrected. Until the first
// tag, the checked-in snapshot api/gate.txt is the baseline that CI compares
// the exported API against (see docs/library.md).
package gate
