"""``mpdp simulate``: placeholder until the end-to-end run lands."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("simulate", help="run parties and the observer over MQTT")
    parser.set_defaults(run=lambda args: 0)
