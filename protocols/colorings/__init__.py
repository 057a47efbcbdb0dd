"""Graph colorings (001): colored graphs, morphisms, the optimal (epsilon, delta)-DP randomized coloring, lines,
the central majority mechanism and domination between mechanisms."""
