package cli

import "context"

// CalibrateCommand is `retrieval-gate calibrate`. (Placeholder until its issue lands.)
type CalibrateCommand struct{}

func (c *CalibrateCommand) Name() string     { return "calibrate" }
func (c *CalibrateCommand) Synopsis() string { return "not implemented yet" }

func (c *CalibrateCommand) Run(ctx context.Context, env *Env, args []string) error {
	return usagef("calibrate: not implemented yet")
}
