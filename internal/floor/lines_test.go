package floor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddLines(t *testing.T) {
	var l List
	require.NoError(t, check.AddLines(&l, "\n# a comment\n  retrieval_hit_at_k=0.5  \nretrieval_recall_at_k@locale:de=0.7\n"))
	require.Len(t, l, 2)
	assert.Equal(t, "retrieval_hit_at_k@overall", l[0].Target())
	assert.Equal(t, "retrieval_recall_at_k@locale:de", l[1].Target())

	err := check.AddLines(&l, "retrieval_hit_at_k@overall=0.6")
	require.Error(t, err, "a second floor on one target")
	assert.Len(t, l, 2)
	require.ErrorIs(t, check.AddLines(&l, "no equals sign"), ErrSyntax)
}

func TestUsage(t *testing.T) {
	assert.Contains(t, check.Usage(), "MEASURE: retrieval_hit_at_k, ")
	assert.True(t, strings.HasSuffix(check.Usage(), "GROUP: @overall (the default), @type:NAME or @locale:TAG; a NAME or TAG with '=', surrounding space, a leading '\"' or unprintable characters is written as a Go quoted string: @type:\"a=b\"=0.5"), check.Usage())
	assert.True(t, strings.HasSuffix(compare.Usage(), "GROUP: @overall (the default)"), compare.Usage())
}
