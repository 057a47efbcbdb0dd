"""The one exception tree of mpdp.

Every error mpdp raises on purpose derives from :class:`MpdpError`, so a caller can catch the
whole family in one clause; third-party errors are wrapped with ``raise ... from``::

    MpdpError
     ├── ParameterError (also ValueError)   a bad value: names it and what is allowed
     │    ├── DatasetError                   a dataset file with values other than 0/1, y/n/?
     │    └── SizeLimitError                 a size an engine cannot hold (names the limit and
     │         │                             the engine or option that would serve)
     │         └── CostLimitError            a computation whose up-front estimate exceeds the time
     │                                       limit or the memory (names the estimate and the way out)
     ├── SolverError                         a linear program that did not reach optimality
     ├── TransportError                      the MQTT broker cannot be reached or went away
     ├── WorkerError                         one of the session's own processes died, failed or
     │                                       never reported ready (a worker, a party host)
     └── ProtocolViolation                   a wire message that fails validation (observer side)

This module lives in ``protocols`` because that package is the root of the import graph
(protocols <- analysis <- parties -> broker); ``broker`` imports only this module from it.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CostLimitError",
    "DatasetError",
    "MpdpError",
    "ParameterError",
    "ProtocolViolation",
    "SizeLimitError",
    "SolverError",
    "TransportError",
    "WorkerError",
]


class MpdpError(Exception):
    """Root of every error mpdp raises on purpose."""


class ParameterError(MpdpError, ValueError):
    """A parameter outside its domain.

    Attributes:
        name: the parameter's name as the user wrote it (e.g. ``"epsilon"``, ``"--delta"``).
        value: the offending value.
        allowed: a human description of the allowed values.

    ``message``, when given, replaces the ``name=value is not allowed: allowed (hint)`` text, for a refusal
    that reads better as a sentence saying what is wrong and what to do.
    """

    def __init__(self, name: str, value: Any, allowed: str, hint: str | None = None, *,
                 message: str | None = None) -> None:
        self.name = name
        self.value = value
        self.allowed = allowed
        self.hint = hint
        if message is None:
            message = f"{name}={value!r} is not allowed: {allowed}"
            if hint:
                message += f" ({hint})"
        super().__init__(message)


class DatasetError(ParameterError):
    """A dataset that cannot be read as one private bit per party and round.

    ``message``, when given, replaces the ``name=value is not allowed: ...`` text (for errors that read
    better as a sentence, e.g. ``votes.csv: line 2 has 3 cells, the first row has 2``).
    """


class SizeLimitError(ParameterError):
    """A problem too large for the engine asked for.

    Attributes (besides those of :class:`ParameterError`):
        limit: the largest size the engine accepts.
        alternative: the engine or option that would serve, in words.
    """

    def __init__(self, name: str, value: Any, limit: Any, alternative: str) -> None:
        self.limit = limit
        self.alternative = alternative
        super().__init__(name, value, f"at most {limit}", hint=alternative)


class CostLimitError(SizeLimitError):
    """A computation refused before it starts: its estimated time or memory exceeds the limit.

    Attributes (besides those of :class:`SizeLimitError`):
        estimate: the :class:`mpdp.protocols.numerics.cost.CostEstimate` that was refused.

    ``alternative`` (None: the estimate's own) is what the message suggests instead.
    """

    def __init__(self, estimate: Any, limit: str, message: str, alternative: str | None = None) -> None:
        self.estimate = estimate
        super().__init__(estimate.task, estimate.size, limit, estimate.alternative if alternative is None else alternative)
        self.args = (message,)


class SolverError(MpdpError):
    """A linear program that HiGHS did not solve to optimality.

    Attributes:
        status: the solver's integer status code; message: its text.
    """

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.solver_message = message
        super().__init__(f"linear program not solved (HiGHS status {status}): {message}")

    def __reduce__(self) -> tuple[type[SolverError], tuple[int, str]]:
        """Pickled as its status and message (it crosses from a solver process, mpdp.protocols.numerics.deadline)."""
        return SolverError, (self.status, self.solver_message)


class CertificateError(MpdpError):
    """An exact computation whose result failed its independent check (a closed-form total it must
    reproduce); the message names the computation, the value and the expected one."""


class TransportError(MpdpError):
    """The broker cannot be reached, refused us, or the connection was lost.

    Attributes:
        reason: the last cause in a few words (``[Errno 111] Connection refused``), when there is one.
        final: True when trying again cannot help (the broker refused the login, the client id or the
            certificate); False for what a broker that comes up later may cure (refused, timed out).
    """

    def __init__(self, message: str, *, reason: str | None = None, final: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.final = final


class WorkerError(MpdpError):
    """One of the session's own processes died, reported failure, or never reported ready: a worker
    process of ``mpdp simulate`` or a party host of ``mpdp party`` (not the broker or the network:
    that is :class:`TransportError`)."""


class ProtocolViolation(MpdpError):
    """A wire message that fails validation.

    Attributes:
        reason: a short machine-friendly reason (``"schema"``, ``"signature"``, ``"duplicate"``, ...).
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}" if detail else reason)
