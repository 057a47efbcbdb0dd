"""mpdp: multi-party differential privacy you can run.

The package is one import name with four rooms, whose imports point one way
(``protocols <- analysis <- parties -> broker``):

- :mod:`mpdp.protocols`: the pure mathematics of the papers (mechanisms, functions, decision rules,
  graph-coloring mechanisms);
- :mod:`mpdp.analysis`: exact theory, statistics, composition and reports;
- :mod:`mpdp.broker`: MQTT transport, wire messages, signing, sealing and broker launchers;
- :mod:`mpdp.parties`: processes (parties, observer, curator), sessions and the ``mpdp`` command line.

The Python API (:mod:`mpdp.parties.api`) is at the top: ``mpdp.simulate``, ``mpdp.simulate_async``,
``mpdp.estimate``, ``mpdp.sweep``, ``mpdp.accuracy``, ``mpdp.compose``, ``mpdp.mechanism``, ``mpdp.audit``, each
returning a typed, frozen result with ``to_dict()``, ``to_frame()``, ``plot(ax=None)``::

    import mpdp
    r = mpdp.simulate(dataset="house-votes-84", epsilon=1.0, repetitions=50, seed=3)
    r.to_dict()
    r.plot()

``import mpdp`` itself is light: the rooms and the API are imported when first used (the API's names
are those of :mod:`mpdp.parties.api`, itself lazy; ``__init__.pyi`` re-exports them for type checkers).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

try:
    __version__: str = metadata.version("mpdp")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
    __version__ = "0+unknown"


def _api() -> Any:
    from mpdp.parties import api

    return api


def __getattr__(name: str) -> Any:
    api = _api()
    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module 'mpdp' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The API's names and the package's own public ones (not ``Any``, ``metadata``, ``annotations``)."""
    own = {name for name in globals() if not name.startswith("_") and name not in {"Any", "metadata", "annotations"}}
    return sorted({*own, "__version__", *_api().__all__})


__all__ = ["__version__", *_api().__all__]
