"""Progress bars on standard error: :class:`Progress` over the messages of a run, and :func:`step_progress` over
the steps of any other long computation. Both print nothing when disabled or when standard error is no terminal.

In a Jupyter kernel rich draws its bars with ipywidgets; without ipywidgets installed the bars are left out
quietly (:func:`bar_shown`), where rich would warn ``install "ipywidgets" for Jupyter support`` on every run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

from mpdp.parties.session.datasets import Dataset

__all__ = ["Progress", "bar_shown", "step_progress"]


def bar_shown(console: Console, enabled: bool = True) -> bool:
    """Whether a rich progress bar on ``console`` is drawn: ``enabled``, and, in a Jupyter kernel, ipywidgets
    importable (rich's live display needs it there; without it the bar is skipped, no warning)."""
    if not enabled:
        return False
    if not console.is_jupyter:
        return True
    import importlib.util

    return importlib.util.find_spec("ipywidgets") is not None


class Progress:
    """A rich progress bar over the messages a run expects (one per party and round), with the time elapsed
    and the time left at the rate measured since the bar started.

    ``update(rounds_done, messages_received)`` is the runner's progress callback; the bar names the round
    under way (``round 1/5`` at the start, ``round 5/5`` once every round is done). Disabled (or not a
    terminal) it prints nothing. A resumed run starts the bar at what its store holds (``rounds_done``,
    ``messages_done``): those count as done, not as progress made now, so the rate and the time left are
    those of the rounds still to run.

    Args:
        dataset: the run's votes (its parties and rounds make the totals).
        enabled: False prints nothing.
        rounds_done, messages_done: the rounds and messages recorded before this run started (resume).
        clock: seconds for the rate (rich's ``get_time``; tests pass their own; None: monotonic).
    """

    def __init__(self, dataset: Dataset, enabled: bool = True, *, rounds_done: int = 0, messages_done: int = 0,
                 clock: Callable[[], float] | None = None) -> None:
        self._total = dataset.num_parties * dataset.num_rounds
        self._rounds = dataset.num_rounds
        console = Console(stderr=True)
        self._bar = RichProgress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("messages"), TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
            console=console, disable=not bar_shown(console, enabled), transient=False, get_time=clock,
        )
        # the recorded part is where the bar starts: rich's rate counts only what is added after
        self._task = self._bar.add_task(self._round(rounds_done), total=self._total,
                                        completed=messages_done)

    def __enter__(self) -> Progress:
        self._bar.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._bar.__exit__(exc_type, exc, tb)

    def update(self, rounds_done: int, messages_received: int) -> None:
        """Show ``rounds_done`` of the rounds and ``messages_received`` of the messages (both counting what
        was recorded before, as the runner reports them)."""
        self._bar.update(self._task, completed=messages_received,
                         description=self._round(rounds_done))

    def _round(self, rounds_done: int) -> str:
        """``round 1/5`` while the first of five runs: the round under way, counted from 1 (the last once
        every round is done), never ``round 0/5``."""
        return f"round {min(rounds_done + 1, self._rounds)}/{self._rounds}"

    @property
    def state(self) -> tuple[str, int, float | None]:
        """The bar's description, messages done, and seconds left at the measured rate (None: no rate yet)."""
        task = self._bar.tasks[0]
        return task.description, int(task.completed), task.time_remaining


@contextmanager
def step_progress(description: str, total: int, estimate: str = "", enabled: bool = True, *,
                  hidden_until_started: bool = False) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on stderr over ``total`` steps; yields ``advance(steps)`` (that many steps done).

    Args:
        description: what runs (``"k=401, epsilon=1"``-style text is set per step by the caller's label).
        estimate: the up-front estimate, shown beside the bar (``"about 30 s"``).
        enabled: False (``--json``, ``--quiet``) prints nothing; so does a stderr that is not a terminal.
        hidden_until_started: show the bar only once a step is done (work that may not happen at all,
            e.g. the Monte Carlo fallback of ``mpdp accuracy``).
    """
    console = Console(stderr=True)
    bar = RichProgress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TextColumn(estimate), TimeElapsedColumn(), console=console,
                       disable=not (bar_shown(console, enabled) and console.is_terminal), transient=True)
    with bar:
        task = bar.add_task(description, total=total, visible=not hidden_until_started)
        yield lambda steps: bar.update(task, advance=steps, visible=True)
