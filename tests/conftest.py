"""Shared fixtures: the reference vectors copied from ../shared/vectors (tests stay self-contained)."""

import json
import pathlib

import pytest

VECTORS = pathlib.Path(__file__).parent / "vectors"


@pytest.fixture(scope="session")
def graph_vectors() -> list[dict]:
    with open(VECTORS / "graph_colorings.json") as fh:
        return json.load(fh)["cases"]
