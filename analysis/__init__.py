"""Theory and statistics over protocols: exact accuracy, composition, accounting, audits, reports.

Pure like ``protocols`` (no asyncio, no network); writes files only where a caller asks for a report.
"""

__all__: list[str] = []
