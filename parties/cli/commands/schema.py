"""``mpdp schema``: the JSON Schema of every ``--json`` document, one file per kind.

Writes DIR/<kind>.schema.json for each document kind (``accuracy``, ``compose``, ``simulate``, ``sweep``,
...), generated from the pydantic models of :mod:`mpdp.parties.api.schemas`. Every document starts with
``schema_version``, ``mpdp_version``, ``kind`` (the command) and ``inputs`` (what was asked); the models
fix each kind's top-level keys and leave the inside loose. The repository commits them under ``schemas/``.
"""

from __future__ import annotations

import argparse
import json

from mpdp.parties.cli.args import emit, plain_text
from mpdp.parties.session.output_paths import output_dir

__all__ = ["register", "run"]

EPILOG = """\
examples:
  mpdp schema --out schemas/
  mpdp simulate --parties 5 --rounds 2 --json run.json   # a document of kind "simulate"
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``schema`` sub-command."""
    p = subparsers.add_parser("schema", description=plain_text(__doc__), epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="schemas", metavar="DIR",
                   help="directory to write the <kind>.schema.json files to (default: schemas; created if missing)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write every kind's schema (sorted keys, two-space indent, final newline); print the paths. Returns 0."""
    from mpdp.parties.api.schemas import json_schemas

    out = output_dir(args.out, "--out")
    written = []
    for name, schema in json_schemas().items():
        path = out / name
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(str(path))
    emit(args, {"out": str(out), "files": written})
    print(f"wrote {len(written)} JSON Schemas to {out}")
    return 0
