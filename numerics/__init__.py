"""How attnbounds computes: batched kernels, exact rational evaluators, samplers, model loaders."""
