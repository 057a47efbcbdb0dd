"""Inside ``parties/`` the imports point down the floors, never up or sideways:

    rounds  <-  rr, curator, mpc (independent of each other)  <-  session  <-  api  <-  cli

(../shared/DESIGN.md, "Layout and dependencies"; docs/architecture.md). Every import counts: at the top of a
module, inside a function, under ``TYPE_CHECKING``. The top-level arrows (protocols <- analysis <- parties ->
broker) are tests/test_layout.py's.
"""

import ast
import pathlib

import pytest

PARTIES = pathlib.Path(__file__).resolve().parents[1] / "parties"
#: The floor of each sub-package of parties/: a module may import its own sub-package and lower floors only.
FLOORS = {"rounds": 0, "rr": 1, "curator": 1, "mpc": 1, "session": 2, "api": 3, "cli": 4}
#: ``mpdp.parties`` itself (its lazy names reach every floor) is above them all.
TOP = len(FLOORS)

#: The imports against the floors that are still there (issue 21), as "importing file -> imported module" (paths
#: under parties/, modules under mpdp.parties). The list may only shrink: a new violation fails the test, and so
#: does a fixed one still listed here (remove it). api/ and session/ may never appear (test below).
KNOWN_VIOLATIONS = frozenset({
    # Plug-ins built on each other by subclassing (MpcParty(CuratorParty), MpcSession(CuratorSession),
    # MpcStore(CuratorStore)): what two share belongs in a lower room, by composition.
    "mpc/coordinator.py -> curator.curator",
    "mpc/party.py -> curator.party",
    "mpc/session.py -> curator.session",
    "mpc/store.py -> curator.store",
})


def _floor_of(module: str) -> tuple[str, int] | None:
    """``mpdp.parties.session.seeds`` -> ``("session.seeds", 2)``; ``mpdp.parties`` -> ``("", TOP)``; a module
    outside mpdp.parties -> None."""
    parts = module.split(".")
    if parts[:2] != ["mpdp", "parties"]:
        return None
    if len(parts) == 2:
        return "", TOP
    return ".".join(parts[2:]), FLOORS.get(parts[2], TOP)


def breaks_the_floors(room: str, module: str) -> bool:
    """True when a module of the sub-package ``room`` (a key of FLOORS) may not import ``module``: a higher
    floor, or another sub-package on its own floor (the plug-ins are independent of each other)."""
    target = _floor_of(module)
    if target is None:
        return False
    name, floor = target
    other = name.split(".")[0]
    return other != room and floor >= FLOORS[room]


def _imported_modules(path: pathlib.Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (``from a.b import c`` counts as ``a.b``)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import (write mpdp.parties....)"
            if node.module:
                modules.add(node.module)
    return modules


def violations() -> set[str]:
    """The imports of parties/ against the floors, as ``"rr/party.py -> session.seeds"``."""
    found = set()
    for room in FLOORS:
        for path in sorted((PARTIES / room).rglob("*.py")):
            for module in _imported_modules(path):
                if breaks_the_floors(room, module):
                    found.add(f"{path.relative_to(PARTIES)} -> {module.removeprefix('mpdp.parties.')}")
    return found


@pytest.mark.parametrize("room, module, breaks", [
    ("rr", "mpdp.parties.rounds.engine", False),
    ("rr", "mpdp.parties.rr.party", False),
    ("rr", "mpdp.parties.session.plan", True),  # up
    ("rr", "mpdp.parties.curator.store", True),  # sideways, between plug-ins
    ("session", "mpdp.parties.mpc.store", False),
    ("session", "mpdp.parties.api.simulation", True),
    ("api", "mpdp.parties.cli.args", True),
    ("cli", "mpdp.parties.api.simulation", False),
    ("rounds", "mpdp.parties", True),  # the lazy names of mpdp.parties reach every floor
    ("rounds", "mpdp.broker.transport", False),
])
def test_which_imports_break_the_floors(room: str, module: str, breaks: bool) -> None:
    assert breaks_the_floors(room, module) is breaks


def test_imports_inside_parties_point_down_the_floors() -> None:
    found = violations()
    assert sorted(found - KNOWN_VIOLATIONS) == [], "new imports against the floors (see the module docstring)"
    assert sorted(KNOWN_VIOLATIONS - found) == [], "fixed: remove these from KNOWN_VIOLATIONS"


def test_the_session_and_the_api_import_neither_the_api_nor_the_cli() -> None:
    """No exception for these two floors (issue 21, Done when), not even a known one."""
    assert sorted(v for v in violations() | KNOWN_VIOLATIONS if v.startswith(("session/", "api/"))) == []
