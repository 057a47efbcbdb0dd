"""The Python API of mpdp (``import mpdp``): functions that return typed, frozen results.

Each result has ``to_dict()`` (the document the matching ``mpdp`` command prints with ``--json``),
``to_frame()`` (pandas, the optional extra ``mpdp[frame]``), ``plot(ax=None)`` returning the matplotlib
Figure, and a short ``repr``/``_repr_html_`` for notebooks (:mod:`mpdp.parties.api.result`).
The names are imported on first use (``lazy_loader``), so ``import mpdp`` stays light.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
