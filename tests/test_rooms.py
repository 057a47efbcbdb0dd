"""Inside ``parties/`` the imports point down the floors, never up or sideways:

    rounds  <-  ballots  <-  rr, curator, mpc (independent of each other)  <-  session  <-  api  <-  cli

(``ballots``: what the central protocols, curator and mpc, share: the ballot store, the ballot party, the
central release's rules.)

(../shared/DESIGN.md, "Layout and dependencies"; README, "Architecture"). Every import counts: at the top of a
module, inside a function, under ``TYPE_CHECKING``. The top-level arrows (protocols <- analysis <- parties ->
broker) are tests/test_layout.py's.
"""

import ast
import pathlib

import pytest

PARTIES = pathlib.Path(__file__).resolve().parents[1] / "parties"
#: The floor of each sub-package of parties/: a module may import its own sub-package and lower floors only.
FLOORS = {"rounds": 0, "ballots": 1, "rr": 2, "curator": 2, "mpc": 2, "session": 3, "api": 4, "cli": 5}
#: ``mpdp.parties`` itself (its lazy names reach every floor) is above them all.
TOP = len(FLOORS)

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
    ("rr", "mpdp.parties.curator.curator", True),  # sideways, between plug-ins
    ("mpc", "mpdp.parties.ballots.store", False),  # the lower room the central protocols share
    ("ballots", "mpdp.parties.curator.party", True),
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
    """No exception (issue 21, Done when): the plug-ins import nothing from each other, the session neither the
    API nor the CLI, the API not the CLI."""
    assert sorted(violations()) == [], "imports against the floors (see the module docstring)"


def test_every_sub_package_of_parties_has_its_floor() -> None:
    """A new room must be given its floor here (else the test above would not check it)."""
    rooms = {p.parent.name for p in PARTIES.glob("*/__init__.py")} - {"data"}
    assert sorted(rooms - set(FLOORS)) == []


def test_the_plug_ins_subclass_nothing_of_each_other() -> None:
    """Composition over inheritance (issue 21): a class of rr, curator or mpc has no base from another plug-in
    (what two share is in a lower room), and no ``type: ignore[override]`` is left in parties/."""
    plug_ins = ("rr", "curator", "mpc")
    names = {room: {node.name for path in (PARTIES / room).rglob("*.py")
                    for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)}
             for room in plug_ins}
    for room in plug_ins:
        others = set().union(*(names[o] for o in plug_ins if o != room))
        for path in (PARTIES / room).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef):
                    bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                    assert not bases & others, f"{path.relative_to(PARTIES)}: {node.name} subclasses {bases & others}"
    assert [str(p.relative_to(PARTIES)) for p in PARTIES.rglob("*.py") if "ignore[override]" in p.read_text()] == []
