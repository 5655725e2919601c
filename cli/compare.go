package cli

import "context"

// CompareCommand is `retrieval-gate compare`. (Placeholder until its issue lands.)
type CompareCommand struct{}

func (c *CompareCommand) Name() string     { return "compare" }
func (c *CompareCommand) Synopsis() string { return "not implemented yet" }

func (c *CompareCommand) Run(ctx context.Context, env *Env, args []string) error {
	return usagef("compare: not implemented yet")
}
