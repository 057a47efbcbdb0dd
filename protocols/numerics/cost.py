"""Up-front cost estimates: what a long computation will take, stated (and refused) before it starts.

Every computation that can run for minutes -- the worst-case LP (:mod:`mpdp.protocols.decision.worst_case`), a
Monte Carlo accuracy estimate, the exact accuracy of many voters, a simulated session of many parties --
states its cost first as one :class:`CostEstimate`: seconds and bytes from a small model of its size
(a :class:`PowerLaw` in the size's measures), calibrated by measurement; each model documents its
measurements next to its constants. :meth:`CostEstimate.check` refuses, naming the estimate and the
alternative, only what would exceed the time limit (``DEFAULT_TIME_LIMIT`` unless the caller passes
another: the CLI's ``--time-limit SECONDS``; None = no time limit) or the memory the machine can give now
(:func:`memory_limit`: what it has available, at most ``MEMORY_FRACTION`` of its physical memory). The models are estimates (within a factor of about 2-4 of the measurements), not
promises: a computation that starts is still bounded by its own time limit where the solver has one.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mpdp.protocols.errors import CostLimitError, ParameterError
from mpdp.protocols.numbers import refuse_bool

__all__ = ["DEFAULT_TIME_LIMIT", "IMPORT_SECONDS", "MEMORY_FRACTION", "CostEstimate", "PowerLaw", "check_time_limit",
           "available_memory", "format_bytes", "format_seconds", "import_seconds", "memory_limit", "noun",
           "physical_memory", "usable_cores"]

#: Seconds a computation may take unless the caller allows more (``--time-limit``).
DEFAULT_TIME_LIMIT = 60.0
#: Share of the machine's physical memory one computation may be estimated to use.
MEMORY_FRACTION = 0.75
#: CPU seconds of importing a module an engine loads only where it needs it, on top of numpy, scipy.sparse
#: and scipy.special (measured 2026-12-02 on the 2-core machine at load 13-17: scipy.signal 0.44-0.47 s,
#: most of it the scipy.stats it imports; scipy.optimize 0.16-0.19 s): a 0.02 s exact rule of 300 parties
#: took 0.9 s CPU, the rest its first scipy.signal import.
IMPORT_SECONDS = {"scipy.signal": 0.45, "scipy.stats": 0.4, "scipy.optimize": 0.17}


def physical_memory() -> int:
    """Bytes of physical memory of this machine (``os.sysconf``; 8 GiB where it is not available)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # not a POSIX sysconf
        return 8 << 30


def usable_cores() -> int:
    """CPUs this process may run on (:func:`os.sched_getaffinity`; ``os.cpu_count()`` where it is not available),
    >= 1."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else max(1, os.cpu_count() or 1)


def available_memory(proc: Path = Path("/proc"), cgroups: Path = Path("/sys/fs/cgroup")) -> int:
    """Bytes of memory this machine can give a computation now: ``MemAvailable`` of ``/proc/meminfo`` (what can
    be had without swapping: free memory and reclaimable caches, less what other processes use), or the memory
    limit of this process's cgroup (v1 or v2, its own or an ancestor's: a container's limit, which
    ``MemAvailable`` does not see) where lower; :func:`physical_memory` where neither can be read.

    Args:
        proc: where ``meminfo`` and ``self/cgroup`` are read; cgroups: where the cgroup hierarchies are mounted.
    """
    limits = [physical_memory()]
    try:
        for line in (proc / "meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                limits.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    limits.extend(_cgroup_limits(proc, cgroups))
    return min(limits)


def _cgroup_limits(proc: Path, cgroups: Path) -> list[int]:
    """The memory limits set on this process's cgroups and their ancestors (none where unset or unreadable)."""
    try:
        lines = (proc / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return []
    limits = []
    unified = cgroups / "unified" if (cgroups / "unified" / "cgroup.controllers").exists() else cgroups
    for line in lines:  # "0::/path" (v2), "4:memory:/path" (v1)
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if controllers == "":
            root, name = unified, "memory.max"
        elif "memory" in controllers.split(","):
            root, name = cgroups / "memory", "memory.limit_in_bytes"
        else:
            continue
        parts = [p for p in path.split("/") if p]
        for depth in range(len(parts) + 1):
            try:
                text = (root.joinpath(*parts[:depth]) / name).read_text().strip()
            except OSError:
                continue
            if text.isdigit() and int(text) < 1 << 60:  # "max" (v2) or a huge number (v1): no limit
                limits.append(int(text))
    return limits


def memory_limit() -> int:
    """Bytes one computation may be estimated to use: :func:`available_memory` now, at most ``MEMORY_FRACTION``
    of :func:`physical_memory` (the rest left to the system and other work)."""
    return min(int(MEMORY_FRACTION * physical_memory()), available_memory())


def import_seconds(modules: Iterable[str]) -> float:
    """CPU seconds of importing those of ``modules`` (keys of :data:`IMPORT_SECONDS`) not imported yet."""
    return sum(IMPORT_SECONDS[m] for m in set(modules) if m not in sys.modules)


def format_seconds(seconds: float) -> str:
    """``0.42 s``, ``12 s``, ``4.1 min``, ``15 h``, ``3.2 days``, ``170 days``: a duration for people."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.2g} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.2g} h"
    if seconds < 100 * 86400:
        return f"{seconds / 86400:.2g} days"
    return f"{seconds / 86400:,.0f} days"


def noun(count: int, singular: str, plural: str | None = None) -> str:
    """The noun a count takes: ``singular`` for 1 (and -1), else ``plural`` (default: ``singular + "s"``).

    Example:
        >>> f"1 {noun(1, 'party', 'parties')}, 3 {noun(3, 'party', 'parties')}, 0 {noun(0, 'round')}"
        '1 party, 3 parties, 0 rounds'
    """
    return singular if abs(count) == 1 else singular + "s" if plural is None else plural


def format_bytes(size: float) -> str:
    """``640 kB``, ``300 MB``, ``2.1 GB``: a memory size for people (powers of 1000)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.2g} {unit}" if size < 10 * scale else f"{size / scale:.0f} {unit}"
    return f"{size:.0f} B"


def check_time_limit(value: float | None, name: str = "time_limit") -> float | None:
    """A time limit in seconds: a finite number > 0, or None (no limit).

    Raises:
        ParameterError: zero, negative, NaN or infinite (say None for no limit), or a bool."""
    if value is None:
        return None
    refuse_bool(name, value, "a number of seconds > 0")
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(name, value, "a number of seconds > 0")
    return float(value)


@dataclass(frozen=True, slots=True)
class PowerLaw:
    """``coefficient * prod(size_i ** exponents[i])``: a cost model fitted to measurements in log space.

    Attributes:
        coefficient: the cost at unit sizes (seconds or bytes).
        exponents: one per size measure, in the order :meth:`__call__` takes them.
    """

    coefficient: float
    exponents: tuple[float, ...]

    def __call__(self, *sizes: float) -> float:
        """The modelled cost at ``sizes`` (each >= 1; smaller values count as 1)."""
        if len(sizes) != len(self.exponents):
            raise ParameterError("sizes", len(sizes), f"{len(self.exponents)} size measures")
        return self.coefficient * float(math.prod(max(float(s), 1.0) ** a for s, a in zip(sizes, self.exponents)))


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """What a computation is expected to cost, stated before it runs.

    Attributes:
        task: what would run, in words (``"the worst-case LP"``).
        size: its size in the measures the model uses (``"53,249 variables, 4,096 input classes"``).
        seconds: estimated wall-clock seconds on one core.
        memory_bytes: estimated peak memory in bytes.
        alternative: what to do instead when it is refused (an option, a rule, a smaller size).
        memory_alternative: what to do instead when it is refused for its memory ("": :attr:`alternative`).
    """

    task: str
    size: str
    seconds: float
    memory_bytes: float
    alternative: str
    memory_alternative: str = ""

    def describe(self) -> str:
        """``about 12 s and 300 MB``."""
        return f"about {format_seconds(self.seconds)} and {format_bytes(self.memory_bytes)}"

    def summary(self) -> str:
        """``the count engine (10,000 parties in two groups): about 1.5 s and 190 MB``: the estimate as
        ``mpdp accuracy`` prints it and as :meth:`refusal` words it."""
        return f"{self.task} ({self.size}): {self.describe()}"

    def refusal(self, time_limit: float | None = DEFAULT_TIME_LIMIT, *, memory_here: bool = True) -> CostLimitError | None:
        """The error :meth:`check` would raise, or None when the computation fits."""
        memory = memory_limit() if memory_here else math.inf
        if self.memory_bytes > memory:
            limit = f"the {format_bytes(memory)} of memory this machine can give now"
            alternative = self.memory_alternative or self.alternative
        elif time_limit is not None and self.seconds > time_limit:
            limit, alternative = f"the {format_seconds(time_limit)} time limit", self.alternative
        else:
            return None
        return CostLimitError(self, limit, f"{self.task} ({self.size}) would take {self.describe()}, over "
                                           f"{limit}: {alternative}", alternative)

    def check(self, time_limit: float | None = DEFAULT_TIME_LIMIT, *, memory_here: bool = True) -> None:
        """Refuse a computation that would not fit.

        Args:
            time_limit: seconds allowed, or None for no time limit.
            memory_here: check :attr:`memory_bytes` against this machine's :func:`memory_limit` (False: the
                memory is another machine's, e.g. a Dask cluster's workers').

        Raises:
            CostLimitError: the estimate exceeds ``time_limit`` or :func:`memory_limit`; the message names the
                estimate, the limit and the alternative.
        """
        error = self.refusal(time_limit, memory_here=memory_here)
        if error is not None:
            raise error
