"""Randomized response and its sampling: the optimal local mechanism, exact Bernoulli draws, the CSPRNG sampler of
deployed parties and the exact-integer threshold release."""
