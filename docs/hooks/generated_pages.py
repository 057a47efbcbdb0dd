"""mkdocs hook: pages made from the code at build time, so they never fall behind it.

- ``reference/cli.md``: every ``mpdp`` command's ``--help``, from the argument parser itself
  (:func:`mpdp.parties.cli.main.build_parser` with every command registered);
- ``tutorials/teacher.md``, ``tutorials/researcher.md``: the two notebooks of ``examples/`` (jupytext
  percent format): markdown cells as text, code cells as Python blocks;

and, on the API reference pages, the Sphinx roles of the docstrings (``:func:`x```, written for ``help()`` and
Sphinx alike) shown as the code they name (:func:`on_page_content`).

``mkdocs.yml`` names this file under ``hooks:``; ``tests/test_docs_site.py`` builds the site with ``--strict``.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HELP_COLUMNS = "100"  # argparse wraps --help at $COLUMNS: one width, whatever terminal builds the site
#: A Sphinx role before the code it marks, as mkdocstrings renders it: ``:func:<code>x</code>``.
SPHINX_ROLE = re.compile(r":(?:mod|func|class|meth|data|attr|exc|obj):(?=<code>)")
NOTEBOOKS = {"tutorials/teacher.md": "teacher.py", "tutorials/researcher.md": "researcher.py"}


def _subcommands(parser: argparse.ArgumentParser, prefix: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(command line, parser)`` of every command and sub-command under ``parser``, in the order listed."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield f"{prefix} {name}", child
                yield from _subcommands(child, f"{prefix} {name}")


def cli_page() -> str:
    """The CLI reference: ``mpdp --help`` and each command's ``--help``, as Markdown."""
    from mpdp.parties.cli.main import COMMANDS, build_parser

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        parser = build_parser(*COMMANDS)
        parts = ["# Command-line reference", "",
                 "Generated from the argument parser (`mpdp.parties.cli.main.build_parser`) when the site is "
                 "built: each command's `--help`, exactly as the terminal shows it. The conventions shared "
                 "by every command are in [Command-line conventions](cli-conventions.md).", "",
                 "## mpdp", "", "```text", parser.format_help().rstrip(), "```", ""]
        for line, child in _subcommands(parser, "mpdp"):
            level = "#" * (line.count(" ") + 1)
            parts += [f"{level} {line}", "", "```text", child.format_help().rstrip(), "```", ""]
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(parts)


def notebook_page(script: Path) -> str:
    """A jupytext percent-format script as Markdown: ``# %% [markdown]`` cells as text, ``# %%`` cells as code."""
    cells: list[tuple[str, list[str]]] = []
    for line in script.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            cells.append(("markdown" if "[markdown]" in line else "code", []))
        elif cells:
            cells[-1][1].append(line)
    parts = []
    for kind, body in cells:
        text = "\n".join(body).strip("\n")
        if not text:
            continue
        if kind == "markdown":
            parts.append("\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in text.splitlines()))
        else:
            parts.append(f"```python\n{text}\n```")
    source = f"examples/{script.name}"
    note = (f"*This page is the notebook `{source}` (jupytext percent format), rendered when the site is built. "
            f"Run it with `python {source}`, or open it in Jupyter with jupytext.*")
    first, rest = parts[0].split("\n", 1) if parts else ("", "")
    return "\n\n".join([first, note, rest.strip("\n"), *parts[1:]]) + "\n"


#: Where the API page shows SimulationConfig's fields (the marker in docs/reference/api/mpdp.md).
CONFIG_FIELDS = "<!-- simulation-config-fields -->"


def _type_text(annotation: Any) -> str:
    """A field's type as its reader writes it: ``int | None``, ``str | BrokerSettings | None``."""
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    text = text or str(annotation)
    text = re.sub(r"typing\.|(?:[a-z_]+\.)+(?=[A-Z])", "", text)
    text = re.sub(r"Annotated\[(\w+), [^\]]*\]", r"\1", text)
    text = re.sub(r"^Optional\[(.*)\]$", r"\1 | None", text)
    return text.replace("NoneType", "None").replace("|", "\\|")  # a pipe in a table cell is escaped


def config_fields() -> str:
    """``SimulationConfig``'s options as a Markdown table: keyword (= ``mpdp simulate`` flag and ``--config``
    key), type, default and description, from the model's fields."""
    from mpdp.parties.api.simulation_config import SimulationConfig

    rows = ["| keyword (`--flag`, TOML key) | type | default | what it is |", "|---|---|---|---|"]
    for name, field in SimulationConfig.model_fields.items():
        default = "(required)" if field.is_required() else repr(field.default)
        described = (field.description or "").replace("|", "\\|")
        rows.append(f"| `{name}` | `{_type_text(field.annotation)}` | `{default}` | {described} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill in SimulationConfig's table of options on the API page (mkdocs hook)."""
    return markdown.replace(CONFIG_FIELDS, config_fields()) if CONFIG_FIELDS in markdown else markdown


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site's files (mkdocs hook)."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, "reference/cli.md", content=cli_page()))
    for page, script in NOTEBOOKS.items():
        files.append(File.generated(config, page, content=notebook_page(ROOT / "examples" / script)))
    return files


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Drop the Sphinx roles before inline code on the API reference pages (mkdocs hook)."""
    if not page.file.src_uri.startswith("reference/api/"):
        return html
    return SPHINX_ROLE.sub("", html.replace("::</p>", ":</p>"))
