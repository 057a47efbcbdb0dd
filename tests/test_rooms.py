"""Inside ``parties/`` the imports point down the floors, never up or sideways:

    rounds  <-  ballots  <-  rr, curator, mpc (independent of each other)  <-  session  <-  api  <-  cli

(``ballots``: what the central protocols, curator and mpc, share: the ballot store, the ballot party, the
central release's rules.)

(../shared/DESIGN.md, "Layout and dependencies"; docs/architecture.md). Every import counts: at the top of a
module, inside a function, under ``TYPE_CHECKING``. The top-level arrows (protocols <- analysis <- parties ->
broker) are tests/test_layout.py's.

Inside ``protocols/`` and ``analysis/`` the sub-packages are concepts, and each may import only the rooms listed
in ``CONCEPT_ARROWS`` (plus the flat modules at the package's root, which import no sub-package):

    protocols:  numerics, randomization  <-  decision  <-  rules;   randomization  <-  interactive, colorings
    analysis:   privacy;  statistics  <-  theory  <-  figures (and privacy), reports  <-  sweeps"""

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


ROOT = PARTIES.parent
#: For each package, the sub-packages (concepts) each one may import; "" is the package's root (its flat modules:
#: protocols/errors.py and functions.py, analysis/plot_style.py), which every room may import and which imports
#: no room. The package itself (``mpdp.protocols``: its lazy names reach every room) is imported by none of them.
CONCEPT_ARROWS: dict[str, dict[str, frozenset[str]]] = {
    "protocols": {
        "": frozenset(),
        "numerics": frozenset({""}),
        "randomization": frozenset({""}),
        "decision": frozenset({"", "numerics", "randomization"}),
        "rules": frozenset({"", "numerics", "randomization", "decision"}),
        "interactive": frozenset({"", "randomization"}),
        "colorings": frozenset({"", "randomization"}),
    },
    "analysis": {
        "": frozenset(),
        "privacy": frozenset({""}),
        "statistics": frozenset({""}),
        "theory": frozenset({"", "statistics"}),
        "figures": frozenset({"", "privacy", "theory"}),
        "reports": frozenset({"", "statistics", "theory"}),
        "sweeps": frozenset({"", "statistics", "theory", "reports"}),
    },
}


def concept_of(package: str, module: str) -> str | None:
    """The room of ``module`` inside ``mpdp.<package>``: ``mpdp.protocols.rules.optimal`` -> ``"rules"``,
    ``mpdp.protocols.errors`` -> ``""`` (a flat module at the root), ``mpdp.protocols`` -> ``"*"`` (the package
    itself), a module outside the package -> None."""
    parts = module.split(".")
    if parts[:2] != ["mpdp", package]:
        return None
    if len(parts) == 2:
        return "*"
    return parts[2] if parts[2] in CONCEPT_ARROWS[package] else ""


def concept_violations(package: str) -> set[str]:
    """The imports inside ``package`` against CONCEPT_ARROWS, as ``"rules/optimal.py -> mpdp.protocols.x.y"``."""
    found = set()
    for path in sorted((ROOT / package).rglob("*.py")):
        relative = path.relative_to(ROOT / package)
        if relative.parts == ("__init__.py",):
            continue
        room = relative.parts[0] if len(relative.parts) > 1 else ""
        for module in _imported_modules(path):
            target = concept_of(package, module)
            if target is not None and target != room and target not in CONCEPT_ARROWS[package][room]:
                found.add(f"{relative} -> {module}")
    return found


@pytest.mark.parametrize("package", sorted(CONCEPT_ARROWS))
def test_every_folder_of_a_package_is_a_listed_concept(package: str) -> None:
    folders = {p.parent.name for p in (ROOT / package).glob("*/__init__.py")}
    assert sorted(folders) == sorted(set(CONCEPT_ARROWS[package]) - {""})


@pytest.mark.parametrize("package", sorted(CONCEPT_ARROWS))
def test_the_concept_arrows_point_one_way(package: str) -> None:
    """No room may import a room that may import it back, through any chain (the allowed arrows form a DAG)."""
    arrows = CONCEPT_ARROWS[package]

    def reachable(room: str) -> set[str]:
        seen: set[str] = set()
        todo = list(arrows[room])
        while todo:
            other = todo.pop()
            if other not in seen:
                seen.add(other)
                todo += arrows[other]
        return seen

    assert sorted(room for room in arrows if room in reachable(room)) == []


@pytest.mark.parametrize("package, room, module, breaks", [
    ("protocols", "rules", "mpdp.protocols.decision.engines", False),
    ("protocols", "rules", "mpdp.protocols.errors", False),
    ("protocols", "decision", "mpdp.protocols.rules.rules", True),  # up
    ("protocols", "colorings", "mpdp.protocols.rules.optimal", True),  # sideways
    ("protocols", "", "mpdp.protocols.randomization.mechanisms", True),  # the root imports no room
    ("protocols", "numerics", "mpdp.protocols", True),  # the lazy names reach every room
    ("analysis", "sweeps", "mpdp.analysis.reports.documents", False),
    ("analysis", "reports", "mpdp.analysis.sweeps.sweep", True),
    ("analysis", "theory", "mpdp.protocols.rules.optimal", False),  # another package: test_layout.py's arrows
])
def test_which_imports_break_the_concept_arrows(package: str, room: str, module: str, breaks: bool) -> None:
    target = concept_of(package, module)
    assert (target is not None and target != room and target not in CONCEPT_ARROWS[package][room]) is breaks


@pytest.mark.parametrize("package", sorted(CONCEPT_ARROWS))
def test_imports_inside_protocols_and_analysis_follow_the_concept_arrows(package: str) -> None:
    assert sorted(concept_violations(package)) == []
