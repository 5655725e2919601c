package publish

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
)

// Comments is the GitHub API the sticky comment needs (github.Client implements
// it against the REST API; tests use the same client against githubtest).
type Comments interface {
	// Self is the token's login; confirmed false means it was assumed (the
	// Actions token may not read GET /user and is github-actions[bot]).
	Self(ctx context.Context) (login string, confirmed bool, err error)
	ListComments(ctx context.Context, pr int) ([]github.IssueComment, error)
	CreateComment(ctx context.Context, pr int, body string) (github.IssueComment, error)
	EditComment(ctx context.Context, id int64, body string) (github.IssueComment, error)
	DeleteComment(ctx context.Context, id int64) error
}

// Upserted is the sticky comment after an upsert.
type Upserted struct {
	ID      int64
	URL     string
	Created bool // a new comment (false: an existing one was updated in place)
	Removed int  // duplicates of ours with the same key that were deleted
}

// createAttempts bounds the creates of one upsert when GitHub answers 5xx (which
// may or may not have created the comment: each retry lists again first).
const createAttempts = 3

// Upsert keeps one comment per marker on the pull request, written by the token's
// own identity: the oldest own comment starting with marker is updated; none is
// created. Comments by anyone else are never touched, whatever they contain.
// After a create the comments are listed again, and when concurrent runs created
// more than one own comment with the marker, the oldest is kept (and given body)
// and the others are deleted.
func Upsert(ctx context.Context, c Comments, pr int, marker, body string, sleep func(context.Context, time.Duration) error) (Upserted, error) {
	self, _, err := c.Self(ctx)
	if err != nil {
		return Upserted{}, err
	}
	var lastErr error
	for attempt := 1; attempt <= createAttempts; attempt++ {
		if attempt > 1 {
			if err := sleep(ctx, time.Duration(attempt-1)*time.Second); err != nil {
				return Upserted{}, &github.APIError{Op: "create", Kind: github.KindNetwork, Message: err.Error()}
			}
		}
		own, err := ownComments(ctx, c, pr, marker, self)
		if err != nil {
			return Upserted{}, err
		}
		if len(own) > 0 {
			keep := own[0]
			up, err := c.EditComment(ctx, keep.ID, body)
			if err != nil {
				return Upserted{}, err
			}
			removed, err := deleteAll(ctx, c, own[1:])
			return Upserted{ID: up.ID, URL: up.URL, Removed: removed}, err
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
		if created.Login != "" {
			self = created.Login // the author of our own comment is who we are
		}
		return settle(ctx, c, pr, marker, body, self, created)
	}
	return Upserted{}, lastErr
}

// settle lists again after a create: a concurrent run may have created one too.
// The oldest own comment with the marker stays, with body; the rest go.
func settle(ctx context.Context, c Comments, pr int, marker, body, self string, created github.IssueComment) (Upserted, error) {
	own, err := ownComments(ctx, c, pr, marker, self)
	if err != nil || len(own) <= 1 {
		// The comment exists; a failed re-listing only leaves a possible
		// duplicate for the next run to remove.
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
	res.Removed, err = deleteAll(ctx, c, own[1:])
	return res, err
}

// ownComments are the comments of pr by self whose body starts with marker,
// oldest first.
func ownComments(ctx context.Context, c Comments, pr int, marker, self string) ([]github.IssueComment, error) {
	all, err := c.ListComments(ctx, pr)
	if err != nil {
		return nil, err
	}
	var own []github.IssueComment
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
	return own, nil
}

func deleteAll(ctx context.Context, c Comments, cs []github.IssueComment) (int, error) {
	n := 0
	for _, cm := range cs {
		if err := c.DeleteComment(ctx, cm.ID); err != nil {
			var ae *github.APIError
			if errors.As(err, &ae) && ae.Kind == github.KindNotFound {
				continue // a concurrent run deleted it first
			}
			return n, err
		}
		n++
	}
	return n, nil
}
