package dataset

// Card is one knowledge-base card.
type Card struct {
	ID     string
	Locale string
	Title  string
	Text   string
	File   string // where the card was read from
	Line   int    // line in File (JSONL), 1 for Markdown cards
}

// KB is a loaded knowledge base, cards in a deterministic order (JSONL: file order;
// Markdown: path order).
type KB struct {
	Path  string
	Cards []Card
	byID  map[string]int
}

// Has reports whether id is a card of the KB.
func (kb *KB) Has(id string) bool { _, ok := kb.byID[id]; return ok }

// Card returns the card with id.
func (kb *KB) Card(id string) (Card, bool) {
	i, ok := kb.byID[id]
	if !ok {
		return Card{}, false
	}
	return kb.Cards[i], true
}
