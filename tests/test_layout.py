"""The import graph points one way: protocols <- analysis <- parties -> broker (DESIGN.md)."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "protocols": {"asyncio", "aiomqtt", "amqtt", "pydantic", "analysis", "parties", "broker", "sqlite3"},
    "analysis": {"asyncio", "aiomqtt", "amqtt", "pydantic", "parties", "broker", "sqlite3"},
    "broker": {"analysis", "parties"},
}


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
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
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("protocols"):
                assert node.module == "protocols.errors", f"{path}: imports {node.module}"
