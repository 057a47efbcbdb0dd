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
import re
import secrets
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
         "export", "audit", "mpc-server", "verify")


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


#: Lists longer than this are written on one line (json's C encoder) inside an indented document: json indents
#: with its pure-Python encoder, and a run's list of 10^6 parties took 16 s of a 27 s ``results.json`` write (load
#: 15, 2026-12-02), the time a stopped 10^6-party run spent before it exited.
LONG_LIST = 1_000


class _NaNFound(Exception):
    """A NaN met on the fast walk (no paths kept): :func:`to_json_text` walks again with paths to name it."""


def _strict(value: Any, where: str | None) -> Any:
    """``value`` with JSON's types (module docstring); ``where``: its path for the NaN message, None on the
    fast walk (no path strings built: 10^6 party entries took 11 s with them), which raises :class:`_NaNFound`."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return _number(value, where)
    if kind is dict:
        if where is None:
            return {k if type(k) is str else str(k): _strict(v, None) for k, v in value.items()}
        return {str(k): _strict(v, f"{where}.{k}") for k, v in value.items()}
    import numpy as np  # here, not at the top: ``mpdp --help`` imports this module but never numpy

    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        if where is None:
            return [_strict(v, None) for v in value]
        return [_strict(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return _strict(dict(value), where)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _number(float(value), where)
    return value


def _number(value: float, where: str | None) -> float | str:
    if math.isnan(value):
        if where is None:
            raise _NaNFound
        raise ParameterError(f"JSON value {where or '(document)'}", value, "a number or +-inf, not NaN")
    return value if math.isfinite(value) else ("inf" if value > 0 else "-inf")


def _fold_long(value: Any, token: str, long: list[str]) -> Any:
    """``value`` (JSON types) with each list of more than :data:`LONG_LIST` items replaced by the string
    ``token-N``, its one-line text ``long[N]``."""
    if type(value) is dict:
        return {k: _fold_long(v, token, long) for k, v in value.items()}
    if type(value) is list:
        if len(value) > LONG_LIST:
            long.append(json.dumps(value, allow_nan=False))
            return f"{token}-{len(long) - 1}"
        return [_fold_long(v, token, long) for v in value]
    return value


def to_json_text(document: Any, indent: int | None = None) -> str:
    """``document`` as strict JSON text: float infinities as the strings ``"inf"``/``"-inf"``.

    numpy scalars and arrays become JSON numbers and lists; tuples become lists. With ``indent``, a list of
    more than :data:`LONG_LIST` items is written on one line (the rest indented).

    Raises:
        ParameterError: a NaN anywhere (names where, e.g. ``JSON value .rows[2].accuracy``).
        TypeError: a value JSON cannot hold (a bug of the caller).
    """
    try:
        strict = _strict(document, None)
    except _NaNFound:
        _strict(document, "")  # raises the ParameterError naming where
        raise
    if indent is None:
        return json.dumps(strict, allow_nan=False)
    long: list[str] = []
    token = secrets.token_hex(16)  # no string of the document holds it
    text = json.dumps(_fold_long(strict, token, long), indent=indent, allow_nan=False)
    if not long:
        return text
    return re.sub(f'"{token}-([0-9]+)"', lambda match: long[int(match[1])], text)
