"""Privacy: loss distributions, regions, homogeneous and heterogeneous composition, post-processing, calibration
of noise, the per-party ledger and empirical audits."""
