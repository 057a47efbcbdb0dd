"""Exact theory of decision accuracy: any rule's accuracy, the observer's on one input, every party's, the
posterior after a round, central versus distributed, the debiased count and interaction (002 Theorem 3.1)."""
