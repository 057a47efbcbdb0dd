"""Randomized response (002): the party that privatizes its bit, the central observer that decides."""
