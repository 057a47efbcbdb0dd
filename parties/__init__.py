"""The processes: party, observer, transcript store, runner, datasets and the ``mpdp`` CLI."""

# The names listed in __init__.pyi are imported on first use (PEP 562), so ``import mpdp.parties`` stays
# cheap; type checkers read the stub.
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
