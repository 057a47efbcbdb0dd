"""Sessions: the seed tree, the runner of a simulation, worker processes, and the deployment roles."""
