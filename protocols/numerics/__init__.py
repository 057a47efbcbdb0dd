"""Exact numerics and compute limits shared by the engines: log-binomials, Kronecker transforms, up-front cost
estimates and the worker killed at a wall-clock deadline."""
