"""parties.cli.main: the ``mpdp`` parser as a whole (help texts)."""

import re

import pytest

from mpdp.parties.cli.main import main


@pytest.mark.parametrize("command", [[], ["compose"], ["mechanism"], ["compare-central"], ["accuracy"]])
def test_help_explains_paper_codes(capsys, command) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = capsys.readouterr().out
    for code, words in (("000", "Composition Theorem"), ("001", "Graph Colorings"),
                        ("002", "Secure Multi-party Differential Privacy")):
        if re.search(rf"(?<![\d.]){code}\b", text) or not command:  # cited: then explained
            assert f"{code} = " in text and words in text, (command, code)
