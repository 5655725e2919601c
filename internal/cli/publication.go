package cli

// What each command hands to GitHub (internal/publish) at its end: the step
// outputs, annotations, the Markdown for the job summary and the sticky PR comment
// under the command's own key. Publishing never changes a command's exit code.

import (
	"flag"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
)

// The comment keys of the commands' defaults: one per command, so that check,
// calibrate and compare on one pull request never overwrite each other's comment.
const (
	checkCommentKey     = publish.DefaultKey // "default", as before commands had keys
	calibrateCommentKey = "calibrate"
	compareCommentKey   = "compare"
	evaluateCommentKey  = "evaluate" // evaluate's compare stage, never a compare step's comment
)

// commentFlags are the flags of a command that keeps a PR comment: --comment says
// whether the run may comment at all, --comment-mode when it does.
type commentFlags struct {
	mode, when, key, author string
	pr                      int
}

// register adds --comment, --comment-mode, --comment-key (default key),
// --comment-author and --pr to fs.
func (c *commentFlags) register(fs *flag.FlagSet, key string) {
	enumVar(fs, &c.mode, "comment", publish.ModeAuto, []string{publish.ModeAuto, publish.ModeAlways, publish.ModeNever},
		"whether to comment on the PR: auto (on a pull request inside Actions, with a token; on a merge request in GitLab CI, with GITLAB_TOKEN), always (also with --pr elsewhere) or never")
	enumVar(fs, &c.when, "comment-mode", publish.WhenAlways, []string{publish.WhenAlways, publish.WhenChanges, publish.WhenFailures, publish.WhenOff},
		"when to post or update the comment: always, changes (only when the report differs from the comment's), failures (only a failing report; a pass updates an earlier comment) or off")
	fs.StringVar(&c.key, "comment-key", key, "key of the PR comment, so several gates keep one comment each")
	fs.StringVar(&c.author, "comment-author", "", "the `LOGIN` that writes the PR comment (e.g. my-app[bot] for a GitHub App's token), whose comments are the run's own (default: the token's, from GET /user, else GraphQL's viewer; GitHub only)")
	fs.IntVar(&c.pr, "pr", 0, "pull request number for the comment, the merge request's iid in GitLab CI (default: from the GitHub event; in GitLab CI, CI_MERGE_REQUEST_IID)")
}

// checkRunFlag is --check-run (check, and compare when it gates): whether the
// report also becomes a check run with every annotation.
type checkRunFlag struct{ mode string }

func (c *checkRunFlag) register(fs *flag.FlagSet) {
	enumVar(fs, &c.mode, "check-run", publish.CheckRunAuto, []string{publish.CheckRunAuto, publish.CheckRunNever},
		"inside Actions, also publish the report as a check run with every annotation (auto: when the token may write checks; never: annotations as workflow commands, at most 10 shown)")
}

// publication gives pub the check run of its comment key when it has a
// check-run title (check; compare when it gates).
func (c checkRunFlag) publication(pub publish.Publication) publish.Publication {
	if pub.CheckTitle != "" {
		pub.CheckRun, pub.CheckMode = publish.CheckRunName(pub.Key), c.mode
	}
	return pub
}

// commentInputs are the Action inputs of commentFlags.
func commentInputs(in actionInputs) actionInputs {
	in["comment"], in["comment-mode"], in["comment-key"], in["comment-author"], in["pr"] = "", "", "", "", ""
	return in
}

// publication applies the comment flags to pub.
func (c *commentFlags) publication(pub publish.Publication) publish.Publication {
	pub.Key, pub.Mode, pub.When, pub.PR, pub.Author = c.key, c.mode, c.when, c.pr, c.author
	return pub
}

// validate checks the comment flags of command cmd (--comment and
// --comment-mode are enums: their flags refuse any other value).
func (c *commentFlags) validate(cmd string, src *sources) error {
	if c.pr < 0 {
		return src.refuse(cmd, "pr", "must be a pull request number")
	}
	if !publish.ValidKey(c.key) {
		return src.refuse(cmd, "comment-key", "must be 1-100 characters of A-Z a-z 0-9 . _ / -")
	}
	if c.author != "" && !github.ValidLogin(c.author) {
		return src.refuse(cmd, "comment-author", "must be a GitHub login: up to 39 letters, digits and hyphens, not starting with a hyphen, then [bot] for an app's bot (my-app[bot]) or _SHORTCODE for an Enterprise Managed User")
	}
	return nil
}

// checkPublication is what `check` publishes (publish.Check), its Markdown
// report under the comment flags' marker.
func checkPublication(r *gate.Result, doc *checkreport.Document, c commentFlags, jsonPath string) publish.Publication {
	return c.publication(publish.Check(r, func(n int) string {
		return doc.Markdown(checkreport.MarkdownOptions{Marker: publish.Marker(c.key), MaxListed: n})
	}, jsonPath, checkreport.ProblemReason))
}
