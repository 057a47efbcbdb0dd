"""Pure mathematics of multi-party differential privacy: mechanisms, functions, decision rules.

No I/O, no asyncio, no network: numbers and numpy arrays in, numbers and numpy arrays out.
"""

# The names listed in __init__.pyi are imported on first use (PEP 562), so ``import mpdp.protocols`` stays
# cheap; type checkers read the stub.
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
