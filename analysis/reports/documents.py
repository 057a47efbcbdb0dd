"""The JSON documents mpdp writes (``--json``, ``results.json``, the API's ``to_dict()``): one header, one
schema per kind.

Every document starts with the same header, stamped by :func:`versioned`:

* ``schema_version`` (int, :data:`SCHEMA_VERSION`): bumped when a document's shape changes incompatibly;
* ``mpdp_version`` (str): the package version that wrote it;
* ``kind`` (str): which document (the command's name: ``"compose"``, ``"sweep"``, ...);
* ``inputs`` (object): what was asked -- the keyword arguments of the API function, or the parsed
  command-line options of a command that has no API function.

:func:`to_json_text` writes a document as strict JSON (RFC 8259): infinities become the strings ``"inf"`` /
``"-inf"``, NaN is refused; numpy scalars and arrays become numbers and lists.

:mod:`mpdp.parties.api.schemas` holds a pydantic model of each kind's top level and makes the JSON Schemas
committed under ``schemas/``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from mpdp import __version__ as mpdp_version
from mpdp.protocols.errors import ParameterError

__all__ = ["KINDS", "SCHEMA_VERSION", "to_json_text", "versioned"]

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


def _strict(value: Any, where: str) -> Any:
    import numpy as np  # here, not at the top: ``mpdp --help`` imports this module but never numpy

    if isinstance(value, dict):
        return {str(k): _strict(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_strict(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if math.isnan(value):
            raise ParameterError(f"JSON value {where or '(document)'}", value, "a number or +-inf, not NaN")
        return value if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    return value


def to_json_text(document: Any, indent: int | None = None) -> str:
    """``document`` as strict JSON text: float infinities as the strings ``"inf"``/``"-inf"``.

    numpy scalars and arrays become JSON numbers and lists; tuples become lists.

    Raises:
        ParameterError: a NaN anywhere (names where, e.g. ``JSON value .rows[2].accuracy``).
        TypeError: a value JSON cannot hold (a bug of the caller).
    """
    return json.dumps(_strict(document, ""), indent=indent, allow_nan=False)
