package publish

import (
	"context"
	"errors"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
)

// Comments is the GitHub API the sticky comment needs (github.Client implements
// it against the REST and GraphQL APIs; tests use the same client against
// githubtest).
type Comments interface {
	// Self is the token's login (github.Client.Self: GET /user, else GraphQL's
	// viewer); Assumed set means GitHub named none and it is assumed.
	Self(ctx context.Context) (github.Identity, error)
	ListComments(ctx context.Context, pr int) ([]github.IssueComment, error)
	CreateComment(ctx context.Context, pr int, body string) (github.IssueComment, error)
	EditComment(ctx context.Context, id int64, body string) (github.IssueComment, error)
	DeleteComment(ctx context.Context, id int64) error
	// MinimizeComment hides a comment as outdated (GraphQL minimizeComment).
	MinimizeComment(ctx context.Context, nodeID string) error
}

// When a comment is posted (--comment-mode): --comment decides whether the run
// may comment at all (a token, a pull request); the comment mode decides when.
const (
	WhenAlways   = "always"   // create or update on every run (the default)
	WhenChanges  = "changes"  // create, or update only when the report differs from the comment's
	WhenFailures = "failures" // create or update on a failing verdict; on a pass only update an existing comment
	WhenOff      = "off"      // never (as --comment never)
)

// Policy is when UpsertPolicy writes the comment.
type Policy struct {
	When   string // WhenAlways ("" too), WhenChanges, WhenFailures (WhenOff never reaches UpsertPolicy)
	Failed bool   // the verdict of the report is fail
	// Author is the login whose comments are the run's own (--comment-author),
	// used instead of asking the token's (Comments.Self); "" asks.
	Author string
}

// Upserted is the sticky comment after an upsert.
type Upserted struct {
	ID      int64
	URL     string
	Created bool   // a new comment (false: an existing one was updated in place)
	Skipped string // why nothing was written ("" when the comment was created or updated)
	Hidden  int    // duplicates of ours with the same key minimised as outdated
	Removed int    // duplicates that could not be minimised and were deleted instead
	// Unsettled is why the comments could not be listed again after a create: the
	// comment exists, but a duplicate a concurrent run created may remain until
	// the next run hides it. nil when the listing succeeded (or there was no create).
	Unsettled error
	// Incomplete is set when the listing stopped at its bound with comments
	// left unread (the pull request or merge request has more than 30,000):
	// a comment found among those read was updated, but none is created when
	// none was found (Skipped is SkipIncomplete), since one may lie further on.
	Incomplete *github.IncompleteError
	// Self is the login the comments were matched with before any create:
	// Policy.Author, else the token's (Comments.Self); Assumed is why it was
	// assumed (github.Identity.Assumed), nil when GitHub named it or
	// Policy.Author gave it.
	Self    string
	Assumed error
	// PostedAs is the author of the comment this upsert created when it is
	// not Self: the next run, matching with Self again, will not find it.
	PostedAs string
	// Probed is set when Self was only assumed (Assumed) and a comment was
	// created without any existing one being edited first: the comments of
	// the author GitHub named for it were settled after (the oldest kept and
	// updated, the rest, the new one among them, hidden).
	Probed bool
}

// The reasons of Upserted.Skipped.
const (
	SkipUnchanged  = "unchanged"
	SkipPassing    = "passing"
	SkipIncomplete = "incomplete" // no comment among those listed, and the listing was cut short
)

// createAttempts bounds the creates of one upsert when GitHub answers 5xx (which
// may or may not have created the comment: each retry lists again first).
const createAttempts = 3

// UpsertPolicy keeps one comment per marker on the pull request, written by the
// token's own identity: the oldest own comment starting with marker is updated;
// none is created. Comments by anyone else are never touched, whatever they
// contain. When the identity is only assumed (Comments.Self named none), no
// comment is edited on that assumption: a new one is created, as when none is
// found, and its author, which GitHub's answer names, is the identity the
// comments are then settled with (Upserted.Probed). After a create the comments are listed again, and when concurrent runs
// created more than one own comment with the marker, the oldest is kept (and
// given body) and the others are hidden as outdated (deleted when GitHub refuses
// to minimise them).
//
// The policy decides when: WhenChanges leaves an existing comment alone when its
// body equals body but for the workflow-run link; WhenFailures creates a comment
// only for a failing report, and on a passing one updates an existing comment
// (so a failure never lingers after the fix) or does nothing. Duplicates are
// hidden whatever the policy.
func UpsertPolicy(ctx context.Context, c Comments, pr int, marker, body string, pol Policy, sleep func(context.Context, time.Duration) error) (Upserted, error) {
	id := github.Identity{Login: pol.Author}
	if id.Login == "" {
		var err error
		if id, err = c.Self(ctx); err != nil {
			return Upserted{}, err
		}
	}
	res, err := upsertAs(ctx, c, pr, marker, body, pol, id.Login, id.Assumed != nil, sleep)
	res.Self, res.Assumed = id.Login, id.Assumed
	return res, err
}

// upsertAs is UpsertPolicy with the comments of self as the run's own; with
// assumed, self is a guess, and no comment is taken for the run's own before
// one is created.
func upsertAs(ctx context.Context, c Comments, pr int, marker, body string, pol Policy, self string, assumed bool, sleep func(context.Context, time.Duration) error) (Upserted, error) {
	var lastErr error
	for attempt := 1; attempt <= createAttempts; attempt++ {
		if attempt > 1 {
			if err := sleep(ctx, time.Duration(attempt-1)*time.Second); err != nil {
				return Upserted{}, &github.APIError{Op: "create", Kind: github.KindNetwork, Message: err.Error()}
			}
		}
		own, partial, err := ownComments(ctx, c, pr, marker, self)
		if err != nil {
			return Upserted{}, err
		}
		if assumed {
			// Another workflow's comment (github-actions[bot]'s, under an
			// App's token) may carry the marker: none is edited on a guess.
			own = nil
		}
		if len(own) > 0 {
			keep := own[0]
			res := Upserted{ID: keep.ID, URL: keep.URL, Incomplete: partial}
			if (pol.When == WhenChanges || pol.When == WhenFailures) && SameReport(keep.Body, body) {
				res.Skipped = SkipUnchanged
			} else {
				up, err := c.EditComment(ctx, keep.ID, body)
				if err != nil {
					return Upserted{}, err
				}
				res.URL = up.URL
			}
			res.Hidden, res.Removed, err = hideAll(ctx, c, own[1:], marker)
			return res, err
		}
		if partial != nil {
			// The oldest comments were read and ours is not among them: it may
			// be further on, and a new one on every run would pile up.
			return Upserted{Skipped: SkipIncomplete, Incomplete: partial}, nil //nolint:nilerr // a listing cut short is no failure: the caller warns from Incomplete
		}
		if pol.When == WhenFailures && !pol.Failed {
			return Upserted{Skipped: SkipPassing}, nil
		}
		created, err := c.CreateComment(ctx, pr, body)
		if err != nil {
			var ae *github.APIError
			if errors.As(err, &ae) && ae.Kind == github.KindServer {
				lastErr = err
				continue
			}
			return Upserted{}, err
		}
		var postedAs string
		if created.Login != "" && !strings.EqualFold(created.Login, self) {
			// The author of our own comment is who we are: the duplicates
			// are looked for with it.
			self, postedAs = created.Login, created.Login
		}
		if assumed && created.Login == "" {
			// GitHub named no author: the comments are not settled on a guess.
			return Upserted{ID: created.ID, URL: created.URL, Created: true, Probed: true}, nil
		}
		res, err := settle(ctx, c, pr, marker, body, self, created)
		res.PostedAs, res.Probed = postedAs, assumed
		return res, err
	}
	return Upserted{}, lastErr
}

// settle lists again after a create: a concurrent run may have created one too.
// The oldest own comment with the marker stays, with body; the rest are hidden.
func settle(ctx context.Context, c Comments, pr int, marker, body, self string, created github.IssueComment) (Upserted, error) {
	// A listing cut short (the comments grew past the bound since the first
	// listing) is settled on the comments it read.
	own, _, err := ownComments(ctx, c, pr, marker, self)
	if err != nil {
		// The comment exists, so the upsert succeeded; the failed re-listing only
		// leaves a possible duplicate for the next run to hide, which the caller says.
		return Upserted{ID: created.ID, URL: created.URL, Created: true, Unsettled: err}, nil //nolint:nilerr // the create succeeded; the listing's error is returned in Unsettled
	}
	if len(own) <= 1 {
		return Upserted{ID: created.ID, URL: created.URL, Created: true}, nil
	}
	keep := own[0]
	res := Upserted{ID: keep.ID, URL: keep.URL, Created: keep.ID == created.ID}
	if keep.ID != created.ID {
		up, err := c.EditComment(ctx, keep.ID, body)
		if err != nil {
			return res, err
		}
		res.URL = up.URL
	}
	res.Hidden, res.Removed, err = hideAll(ctx, c, own[1:], marker)
	return res, err
}

// ownComments are the comments of pr by self whose body starts with marker,
// oldest first. partial is set when the listing stopped at its bound: own are
// then those among the oldest comments, the ones read.
func ownComments(ctx context.Context, c Comments, pr int, marker, self string) (own []github.IssueComment, partial *github.IncompleteError, err error) {
	all, err := c.ListComments(ctx, pr)
	if errors.As(err, &partial) {
		err = nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, cm := range all {
		if strings.EqualFold(cm.Login, self) && hasMarker(cm.Body, marker) {
			own = append(own, cm)
		}
	}
	sort.SliceStable(own, func(i, j int) bool {
		if !own[i].CreatedAt.Equal(own[j].CreatedAt) {
			return own[i].CreatedAt.Before(own[j].CreatedAt)
		}
		return own[i].ID < own[j].ID
	})
	return own, partial, nil
}

// hideAll minimises each duplicate as outdated and retires its marker (so later
// runs neither count nor hide it again); a duplicate GitHub refuses to minimise
// (FORBIDDEN, an old GitHub Enterprise Server without the mutation, ...) is
// deleted instead. Network, rate-limit and server errors stop the cleanup: the
// next run finds the duplicates again.
func hideAll(ctx context.Context, c Comments, cs []github.IssueComment, marker string) (hidden, removed int, err error) {
	for _, cm := range cs {
		err := c.MinimizeComment(ctx, cm.NodeID)
		if err == nil {
			hidden++
			// Best effort: a failure leaves the marker, and the next run hides it
			// again (minimising is idempotent).
			_, _ = c.EditComment(ctx, cm.ID, retire(cm.Body, marker))
			continue
		}
		var ae *github.APIError
		if !errors.As(err, &ae) || ae.Kind == github.KindNetwork || ae.Kind == github.KindRateLimited || ae.Kind == github.KindServer {
			return hidden, removed, err
		}
		if err := c.DeleteComment(ctx, cm.ID); err != nil {
			if errors.As(err, &ae) && ae.Kind == github.KindNotFound {
				continue // a concurrent run removed it first
			}
			return hidden, removed, err
		}
		removed++
	}
	return hidden, removed, nil
}

// retire replaces the marker on the first line of a hidden duplicate with one no
// key can produce ("<!-- retrieval-gate:KEY outdated -->"), keeping its text.
func retire(body, marker string) string {
	i := strings.Index(body, marker)
	if i < 0 {
		return body
	}
	return body[:i] + strings.TrimSuffix(marker, " -->") + " outdated -->" + body[i+len(marker):]
}

// runLink matches the footer runFooter (GitHub) or jobFooter (GitLab) writes:
// the only part of a comment that changes between runs of the same report.
var runLink = regexp.MustCompile(`(?m)^<sub>retrieval-gate · \[(?:workflow run|CI job)\]\([^)\n]*\)</sub>[ \t]*$`)

// SameReport reports whether two comment bodies carry the same report: equal once
// the workflow-run link and trailing blanks are removed.
func SameReport(a, b string) bool {
	norm := func(s string) string {
		return strings.TrimRight(runLink.ReplaceAllString(strings.ReplaceAll(s, "\r\n", "\n"), ""), " \t\r\n")
	}
	return norm(a) == norm(b)
}
