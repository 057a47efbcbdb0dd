"""The import graph points one way: protocols <- analysis <- parties -> broker (../shared/DESIGN.md, "Layout and
dependencies"; docs/architecture.md). The floors inside parties/ are tests/test_rooms.py's."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "protocols": {"asyncio", "aiomqtt", "amqtt", "pydantic", "analysis", "parties", "broker", "sqlite3"},
    "analysis": {"asyncio", "aiomqtt", "amqtt", "pydantic", "parties", "broker", "sqlite3"},
    "broker": {"analysis", "parties"},
}


def _room(module: str) -> str:
    """``mpdp.protocols.errors`` -> ``protocols``; a third-party ``aiomqtt.client`` -> ``aiomqtt``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "mpdp" and len(parts) > 1 else parts[0]


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(_room(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(_room(node.module))
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_point_one_way(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imports(path) & FORBIDDEN[package])
        for path in (ROOT / package).rglob("*.py")
    }
    assert {p: bad for p, bad in offenders.items() if bad} == {}


def test_broker_uses_only_the_error_tree_of_protocols() -> None:
    for path in (ROOT / "broker").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mpdp.protocols"):
                assert node.module == "mpdp.protocols.errors", f"{path}: imports {node.module}"


BARE_ROOMS = ("protocols", "analysis", "broker", "parties")


def test_every_import_of_the_project_goes_through_the_mpdp_name() -> None:
    """A bare ``import protocols`` works only from the repository root; installed, only ``mpdp`` exists."""
    offenders = []
    for folder in (*BARE_ROOMS, "mpdp", "tests", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                           else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                           else [])
                offenders += [f"{path.relative_to(ROOT)}: {m}" for m in modules if m.split(".")[0] in BARE_ROOMS]
    assert offenders == []


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    """pyproject's ``packages`` maps each folder with an ``__init__.py``; a forgotten one is missing once installed."""
    import tomllib

    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {f"mpdp.{room}": ROOT / path for room, path in
               ((name.removeprefix("mpdp.").removeprefix("mpdp"), path) for name, path in setuptools["package-dir"].items())}
    expected = {"mpdp"}
    for name, folder in folders.items():
        if name == "mpdp.":
            continue
        expected |= {".".join((name, *init.parent.relative_to(folder).parts)) for init in folder.rglob("__init__.py")}
    assert sorted(setuptools["packages"]) == sorted(expected)


@pytest.mark.parametrize("room", BARE_ROOMS)
def test_every_name_of_a_rooms_stub_resolves(room: str) -> None:
    """The rooms import their names on first use from the list in ``__init__.pyi``: each must exist."""
    import importlib

    module = importlib.import_module(f"mpdp.{room}")
    assert module.__all__ and all(getattr(module, name) is not None for name in module.__all__)


def test_the_module_map_lists_every_module() -> None:
    """The module map of the docs' architecture page names each module of the four rooms and ``mpdp/``, and
    nothing else."""
    import re

    page = (ROOT / "docs" / "architecture.md").read_text()
    section = page[page.index("## Module map"):]
    section = section[:section.index("\n## ")] if "\n## " in section else section
    listed = re.findall(r"^\| `([^`]+\.py)` \|", section, flags=re.M)
    modules = {str(p.relative_to(ROOT)) for room in BARE_ROOMS for p in (ROOT / room).rglob("*.py")
               if p.name != "__init__.py"}
    modules |= {"mpdp/__init__.py", "mpdp/__main__.py"}
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(modules)
