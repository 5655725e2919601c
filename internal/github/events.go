package github

// writeEvents are the events of the repository's own runs, never of a pull
// request: only their runs may write what later runs trust.
var writeEvents = map[string]bool{"push": true, "schedule": true, "workflow_dispatch": true, "repository_dispatch": true}

// WriteEvent reports whether runs of the event may write what later runs
// trust: the history branch (history/ghbranch) and the baseline artifact
// (baseline/ghartifact), one list. A run any user can trigger with their own
// data (pull_request, issue_comment, workflow_run, …) never may, nor any event
// GitHub adds.
func WriteEvent(name string) bool { return writeEvents[name] }
