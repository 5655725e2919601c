package cli

import "context"

// RetrieveCommand is `retrieval-gate retrieve`. (Placeholder until its issue lands.)
type RetrieveCommand struct{}

func (c *RetrieveCommand) Name() string     { return "retrieve" }
func (c *RetrieveCommand) Synopsis() string { return "not implemented yet" }

func (c *RetrieveCommand) Run(ctx context.Context, env *Env, args []string) error {
	return usagef("retrieve: not implemented yet")
}
