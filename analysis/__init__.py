"""Theory and statistics over protocols: exact accuracy, composition, accounting, audits, reports.

Pure like ``protocols`` (no asyncio, no network); writes files only where a caller asks for a report.
"""

from analysis.accuracy import RuleAccuracy, input_accuracy, monte_carlo_accuracy, rule_accuracy

__all__ = ["RuleAccuracy", "input_accuracy", "monte_carlo_accuracy", "rule_accuracy"]
