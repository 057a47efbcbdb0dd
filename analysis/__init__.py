"""Theory and statistics over protocols: exact accuracy, composition, accounting, audits, reports.

Pure like ``protocols`` (no asyncio, no network); writes files only where a caller asks for a report.
"""

# The names listed in __init__.pyi are imported on first use (PEP 562), so ``import mpdp.analysis`` stays
# cheap; type checkers read the stub.
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
