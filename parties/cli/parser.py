"""The parser class of every ``mpdp`` command: no abbreviated options, no single-valued option given twice,
and a misspelt option named even when argparse stops first at a required one.

argparse took ``--par 5`` for ``--parties 5`` (``allow_abbrev``), kept the last of ``--seed 1 --seed 2``
silently, and answered ``mpdp accuracy --epsilon 1 --fucntion=xor`` with ``the following arguments are
required: --function``, never naming what was typed. :class:`CommandParser` (argparse's sub-parsers are
made of their parent's class: every command's parser is one) refuses the first two and adds the misspelt
option and the one it most likely meant to the third (:func:`mpdp.parties.cli.errors.unrecognized`).

Its errors are one line, ``mpdp: error: ...`` with exit code 2, as every other refusal of the command line
(argparse's own printed the command's whole usage, then ``mpdp simulate: error: ...``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from mpdp.parties.cli.errors import unrecognized

__all__ = ["CommandParser"]


class _StoreOnce(argparse._StoreAction):
    """argparse's ``store`` that refuses a second value for its option within one command line."""

    _namespace: argparse.Namespace | None = None
    _given: Any = None

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if self._namespace is namespace:
            raise argparse.ArgumentError(self, f"given twice ({self._given}, then {values}): it takes one value, "
                                               "give it once")
        self._namespace, self._given = namespace, values
        super().__call__(parser, namespace, values, option_string)


class CommandParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` with ``allow_abbrev=False`` whose single-valued options refuse a
    second value (``argument --seed: given twice (1, then 2): ...``) and whose errors, one line ``mpdp: error:
    ...`` (exit 2), name the options typed that it does not know (``...; unrecognized arguments: --fucntion=xor
    (did you mean --function?)``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)
        self._typed: list[str] = []

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        """argparse's own, after keeping what was typed (``args``, else ``sys.argv[1:]``) for :meth:`error`."""
        given = args[0] if args else kwargs.get("args")
        self._typed = list(sys.argv[1:] if given is None else given)
        return super().parse_known_args(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        typed = self._typed[:self._typed.index("--")] if "--" in self._typed else self._typed
        unknown = [t for t in typed if t.startswith("--") and t.partition("=")[0] not in self._option_string_actions]
        if unknown and not message.startswith("unrecognized arguments"):
            message += "; " + unrecognized(unknown, self)
        elif message.startswith("the following arguments are required"):  # no usage printed: where to look
            message += f" ({self.prog} --help lists them)"
        self.exit(2, f"mpdp: error: {' '.join(message.split())}\n")
