"""mpdp: multi-party differential privacy you can run.

The package is one import name with four rooms, whose imports point one way
(``protocols <- analysis <- parties -> broker``):

- :mod:`mpdp.protocols`: the pure mathematics of the papers (mechanisms, functions, decision rules,
  graph-coloring mechanisms);
- :mod:`mpdp.analysis`: exact theory, statistics, composition and reports;
- :mod:`mpdp.broker`: MQTT transport, wire messages, signing, sealing and broker launchers;
- :mod:`mpdp.parties`: processes (parties, observer, curator), sessions and the ``mpdp`` command line.

``import mpdp`` itself is light: the rooms are imported when first used.
"""

from __future__ import annotations

from importlib import metadata

try:
    __version__: str = metadata.version("mpdp")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
