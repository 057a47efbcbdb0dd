"""Run a function in a child process that is killed at a wall-clock deadline.

For library code that does not always honour its own time limit: HiGHS 1.12 (vendored by scipy 1.17)
builds IPX's starting basis -- LU factorizations that can take minutes -- without looking at its clock
(ERGO-Code/HiGHS#3120, fixed upstream by #3185 after scipy's copy), so a 0.5 s ``time_limit`` ran 74-126 s.
A child process can be stopped wherever it is.

The child comes from the ``forkserver`` start method where the platform has it (a fork of the small
server, never of a caller that may hold threads; ``spawn`` elsewhere). The server preloads the modules
of :data:`PRELOAD` (whichever call starts it), so a call costs a fork and the pickling of its arguments and
result (~0.1 s on the project's loaded 2-core machine), not a new interpreter and scipy's import. As with
any multiprocessing child, the caller's main module is imported again in the child: a script calling this
keeps its work under ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

__all__ = ["PRELOAD", "call_before"]

T = TypeVar("T")
#: Modules the fork server imports once: those of the functions run through it (numpy, scipy's HiGHS).
PRELOAD = ["mpdp.protocols.worst_case"]


def _context() -> Any:
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":  # takes effect when the server starts (once per process)
        context.set_forkserver_preload(PRELOAD)
    return context


def _child(conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        conn.send((True, fn(*args)))
    except Exception as exc:  # re-raised by the caller
        conn.send((False, exc))
    finally:
        conn.close()


def call_before(fn: Callable[..., T], args: tuple[Any, ...], seconds: float) -> T:
    """``fn(*args)`` computed in a child process, killed (SIGKILL) ``seconds`` after this call started.

    In a daemonic process (a session's worker), which multiprocessing lets start no child, ``fn`` runs
    here and only its own limits hold.

    Args:
        fn: a module-level function (picklable), its arguments and result picklable.
        seconds: wall-clock seconds for the whole call, starting the child included (> 0).

    Returns:
        what ``fn`` returned.

    Raises:
        TimeoutError: the deadline passed first (the child is killed and reaped).
        ChildProcessError: the child ended without an answer (killed by the OS, e.g. out of memory).
        Exception: whatever ``fn`` raised, re-raised here.
    """
    if multiprocessing.current_process().daemon:  # multiprocessing lets a daemonic process start none
        return fn(*args)
    deadline = time.monotonic() + seconds
    context = _context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, fn, args), daemon=True)
    process.start()
    sender.close()
    try:
        if not receiver.poll(max(deadline - time.monotonic(), 0.0)):
            raise TimeoutError(f"stopped at the {seconds:g} s time limit")
        try:
            ok, value = receiver.recv()
        except EOFError:
            process.join()
            raise ChildProcessError(f"the solver process ended without an answer (exit code "
                                    f"{process.exitcode})") from None
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        receiver.close()
    if not ok:
        raise value
    result: T = value
    return result
