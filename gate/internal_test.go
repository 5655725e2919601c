package gate

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

func TestDefaultCommentKey(t *testing.T) {
	assert.Equal(t, publish.DefaultKey, defaultCommentKey)
}
