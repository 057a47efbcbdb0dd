"""The graph file of ``mpdp mechanism``: JSON with ``vertices``, ``edges``, ``coloring`` (vertex -> "B" or
"R") and optionally ``boundary`` (vertex -> fixed P(output red)), ``eps`` and ``delta`` -- the format of
the ``inputs`` of ../shared/vectors/graph_colorings.json (a whole case with ``inputs`` is accepted too)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from mpdp.protocols.colorings.graphs import ColoredGraph
from mpdp.protocols.errors import ParameterError

__all__ = ["GraphFile", "load_graph_file"]


class GraphFile(BaseModel):
    """A colored graph with optional boundary values and privacy level."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vertices: list[str | int]
    edges: list[tuple[str | int, str | int]]
    coloring: dict[str, str]
    boundary: dict[str, float] | None = None
    eps: float | None = None
    delta: float | None = None
    e_eps: float | None = None  # informative only (the vectors carry it)

    def graph(self) -> ColoredGraph:
        """The :class:`ColoredGraph` (ParameterError on a self-loop, unknown vertex, third color)."""
        return ColoredGraph.from_edges(self.vertices, self.edges, self.coloring)


def load_graph_file(path: str) -> GraphFile:
    """Read and validate a graph file; ParameterError naming the problem otherwise."""
    try:
        raw = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ParameterError("graph", path, "a readable JSON file", hint=exc.strerror) from exc
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise ParameterError("graph", path, "a UTF-8 JSON file", hint=str(exc)[:200]) from None
    if isinstance(raw, dict) and "inputs" in raw:
        raw = raw["inputs"]
    try:
        return GraphFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise ParameterError(f"graph {path}: {where}", first.get("input"), first["msg"]) from None
