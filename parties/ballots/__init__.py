"""Sealed ballots: what the central protocols (curator, mpc) share, below both of them (issue 21): the ballot
store, the party that answers each round with a sealed ballot, and the runner's central-release rules."""
