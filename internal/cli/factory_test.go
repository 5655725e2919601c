package cli

// NewFactory is the Factory of a run on env, for the tests that build a
// command's Factory themselves (the binary's runs go through Run).
func NewFactory(env *Env) *Factory { return newFactory(env, env.Stderr) }
