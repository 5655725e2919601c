package cli

import "context"

// CheckCommand is `retrieval-gate check`. (Placeholder until its issue lands.)
type CheckCommand struct{}

func (c *CheckCommand) Name() string     { return "check" }
func (c *CheckCommand) Synopsis() string { return "not implemented yet" }

func (c *CheckCommand) Run(ctx context.Context, env *Env, args []string) error {
	return usagef("check: not implemented yet")
}
