"""docs/architecture.md's module map is the one the code draws (docs/module_map.py): the rooms, their sub-packages
in dependency order, the arrows their imports draw and their modules."""

import importlib.util
import pathlib
import types

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _module_map() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("module_map", ROOT / "docs" / "module_map.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_module_map_is_the_one_the_code_draws() -> None:
    module_map = _module_map()
    text = (ROOT / "docs" / "architecture.md").read_text()
    assert module_map.BEGIN in text and module_map.END in text
    committed = module_map.BEGIN + text.split(module_map.BEGIN, 1)[1].split(module_map.END, 1)[0] + module_map.END
    assert committed == module_map.module_map(), "stale: run `python docs/module_map.py --write`"


def test_the_map_lists_every_module_once_under_its_sub_package() -> None:
    """Independent of the drawing: the modules found on disk, each in the row of its folder."""
    drawn = _module_map().module_map()
    for room in ("protocols", "analysis", "broker", "parties"):
        section = drawn.split(f"### {room}/", 1)[1].split("\n### ", 1)[0].split("\n<!--", 1)[0]
        rows = {line.split(" | ")[0].strip("| `"): set(line.rstrip(" |").split(" | ")[2].split(", "))
                for line in section.splitlines() if line.startswith("| `")}
        on_disk: dict[str, set[str]] = {}
        for path in (ROOT / room).rglob("*.py"):
            if path.name == "__init__.py":
                continue
            relative = path.relative_to(ROOT / room)
            sub = relative.parts[0] if len(relative.parts) > 1 else "(root)"
            inner = relative.relative_to(sub) if sub != "(root)" else relative
            on_disk.setdefault(sub, set()).add(".".join(inner.with_suffix("").parts))
        assert rows == on_disk

