package retrieve

// The stores retrieve opens by name (--store): each package registers itself
// (store.Register in its init); a new store is its package plus one line here.
import (
	_ "github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma"
	_ "github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)
