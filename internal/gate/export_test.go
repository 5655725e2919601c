package gate

import "context"

// Result is ResultContext with a context that does not end.
func (a *Accumulator) Result(cfg Config) *Result {
	res, _ := a.ResultContext(context.Background(), cfg)
	return res
}
