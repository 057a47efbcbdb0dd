"""Statistics of measurement: exact intervals, the consistency test and fast Monte Carlo count tables."""
