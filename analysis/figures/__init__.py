"""The papers' figures, drawn from computation: composition (000), audits, colored graphs (001), and the index
of every figure by name."""
