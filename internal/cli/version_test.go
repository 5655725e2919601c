package cli

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionOf(t *testing.T) {
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/retrieval-gate/retrieval-gate", Version: "v1.2.3"}}
	checkout := &debug.BuildInfo{Main: debug.Module{Path: "github.com/retrieval-gate/retrieval-gate", Version: "(devel)"}}
	assert.Equal(t, "v1.2.3", versionOf("dev", installed), "go install …@v1.2.3")
	assert.Equal(t, "v2.0.0", versionOf("v2.0.0", installed), "-ldflags -X wins")
	assert.Equal(t, "dev", versionOf("dev", checkout), "go build in a checkout")
	assert.Equal(t, "dev", versionOf("dev", nil))
}
