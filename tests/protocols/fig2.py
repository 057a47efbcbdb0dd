"""The colored graph of 001 Fig. 2 (reconstructed in ../shared/vectors from the paper's numbers)."""

from mpdp.protocols.colorings.graphs import ColoredGraph


def fig2_graph(vectors: list[dict]) -> ColoredGraph:
    case = next(c for c in vectors if c["id"] == "graph-fig2-thm2")["inputs"]
    return ColoredGraph.from_edges(case["vertices"], case["edges"], case["coloring"])
