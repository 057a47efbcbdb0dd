"""The processes: the protocol-neutral round engine, the protocols on it (randomized response, curator),
sessions (runner, workers, deployment roles) and the ``mpdp`` command line.

Names are imported lazily (PEP 562): ``from mpdp.parties import run`` loads only what ``run`` needs;
``__init__.pyi`` lists them for type checkers and for the loader.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
