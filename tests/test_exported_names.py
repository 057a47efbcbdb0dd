"""The exported names (httpx's habit, issue 21 item 5): ``mpdp.__all__`` is the list below, and each room's
``__all__`` is exactly what its ``__init__.pyi`` imports, each name resolving to a documented object.

A name added to or removed from the Python API changes the list below on purpose, in the same commit."""

import ast
import importlib
import importlib.util
import inspect
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: ``import mpdp``: the Python API (mpdp.parties.api) and the version.
MPDP_API = [
    "Accuracy", "Audit", "Composition", "DOCUMENTS", "Estimate", "Mechanism", "ReportFiles", "Result",
    "Simulation", "SimulationConfig", "Sweep", "Topology", "__version__", "accuracy", "audit", "compose", "estimate", "mechanism", "report",
    "simulate", "simulate_async", "sweep", "validate_document",
]
#: The packages whose names are listed in a stub (``__init__.pyi``) and imported on first use.
STUBBED = {"mpdp.protocols": "protocols", "mpdp.analysis": "analysis", "mpdp.broker": "broker",
           "mpdp.parties": "parties", "mpdp.parties.api": "parties/api"}


def _stub_imports(folder: str) -> dict[str, pathlib.Path]:
    """Each name ``folder/__init__.pyi`` imports -> the file of the module it comes from."""
    stub = ROOT / folder / "__init__.pyi"
    names = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1 and node.module, f"{stub}: only `from .module import name` (lazy_loader)"
            source = ROOT / folder / (node.module.replace(".", "/") + ".py")
            names.update({alias.asname or alias.name: source for alias in node.names})
    return names


def _documented_value(name: str, source: pathlib.Path) -> bool:
    """A constant is documented by a ``#:`` comment right above its module-level assignment (Sphinx's form), or
    it is imported there from a module where it is (followed through ``from mpdp... import name``)."""
    lines = source.read_text().splitlines()
    for node in ast.parse(source.read_text()).body:
        targets = (node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign)
                   else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node.lineno >= 2 and lines[node.lineno - 2].lstrip().startswith("#:")
        if isinstance(node, ast.ImportFrom) and node.module and any(a.name == name for a in node.names):
            assert node.module.startswith("mpdp."), f"{source}: {name} comes from {node.module}"
            return _documented_value(name, _file_of(node.module))
    return False


def _file_of(module: str) -> pathlib.Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    return pathlib.Path(spec.origin)


def test_mpdp_exports_the_python_api() -> None:
    import mpdp

    assert sorted(mpdp.__all__) == MPDP_API
    assert all(getattr(mpdp, name) is not None for name in mpdp.__all__)


@pytest.mark.parametrize("package", sorted(STUBBED))
def test_a_packages_all_is_what_its_stub_imports(package: str) -> None:
    """The runtime list (lazy_loader builds it from the stub's imports) and the stub's own ``__all__`` literal (what
    type checkers and documentation tools read) are the same names, none twice."""
    stub = ROOT / STUBBED[package] / "__init__.pyi"
    (literal,) = [ast.literal_eval(node.value) for node in ast.parse(stub.read_text()).body
                  if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["__all__"]]
    assert len(literal) == len(set(literal)), "a name listed twice"
    imported = sorted(_stub_imports(STUBBED[package]))
    assert sorted(literal) == imported
    assert sorted(importlib.import_module(package).__all__) == imported


@pytest.mark.parametrize("package", sorted(STUBBED))
def test_every_exported_name_is_documented(package: str) -> None:
    """Classes and functions carry their own docstring, defined in mpdp; constants a ``#:`` comment."""
    module = importlib.import_module(package)
    sources = _stub_imports(STUBBED[package])
    undocumented = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__.startswith("mpdp."), f"{package}.{name} is {obj.__module__}'s"
            if not (obj.__doc__ or "").strip():
                undocumented.append(name)
        elif not _documented_value(name, sources[name]):
            undocumented.append(name)
    assert undocumented == []


def test_dir_of_mpdp_lists_the_api_and_no_helper_imports() -> None:
    import mpdp

    listed = set(dir(mpdp))
    assert set(mpdp.__all__) <= listed and "__version__" in listed
    assert not listed & {"Any", "metadata", "annotations"}
