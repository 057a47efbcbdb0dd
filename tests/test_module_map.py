"""docs/architecture.md's module map is the one the code draws (docs/module_map.py): the rooms, their sub-packages
in dependency order, the arrows their imports draw and every module with its docstring's first sentence
(tests/test_layout.py checks that it names every module and nothing else)."""

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

