"""The JSON documents mpdp writes (``--json``, ``results.json``, the API's ``to_dict()``): one header, one
schema per kind.

Every document starts with the same header, stamped by :func:`versioned`:

* ``schema_version`` (int, :data:`SCHEMA_VERSION`): bumped when a document's shape changes incompatibly;
* ``mpdp_version`` (str): the package version that wrote it;
* ``kind`` (str): which document (the command's name: ``"compose"``, ``"sweep"``, ...);
* ``inputs`` (object): what was asked -- the keyword arguments of the API function, or the parsed
  command-line options of a command that has no API function.

:mod:`mpdp.parties.api.schemas` holds a pydantic model of each kind's top level and makes the JSON Schemas
committed under ``schemas/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpdp import __version__ as mpdp_version

__all__ = ["KINDS", "SCHEMA_VERSION", "versioned"]

#: The version of every document's shape (the header and each kind's top-level keys).
SCHEMA_VERSION = 1
#: Every document kind: the commands that print one with ``--json`` (``estimate``: the API's alone).
KINDS = ("accuracy", "compose", "mechanism", "estimate", "simulate", "sweep", "compare-central", "compare", "report",
         "figures", "calibrate", "theorem-3-1", "keys", "party", "observe", "broker", "schema",
         "export", "audit", "mpc-server")


def versioned(kind: str, document: Mapping[str, Any], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` under the common header: ``schema_version``, ``mpdp_version``, ``kind``, ``inputs``, then
    its own keys in their order (a key of ``document`` named like a header key is replaced by the header's).

    Args:
        kind: one of :data:`KINDS` (the command's name).
        document: the body (JSON-ready values). inputs: the arguments asked for (JSON-ready values).

    Raises:
        KeyError: ``kind`` is not a documented kind (a bug of the caller).

    Example:
        >>> d = versioned("compose", {"k": 3}, {"epsilon": 0.5})
        >>> list(d), d["schema_version"], d["inputs"]
        (['schema_version', 'mpdp_version', 'kind', 'inputs', 'k'], 1, {'epsilon': 0.5})
    """
    if kind not in KINDS:
        raise KeyError(f"no document kind {kind!r}; known: {', '.join(KINDS)}")
    header = {"schema_version": SCHEMA_VERSION, "mpdp_version": mpdp_version, "kind": kind, "inputs": dict(inputs)}
    return header | {key: value for key, value in document.items() if key not in header}
