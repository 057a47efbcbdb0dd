"""Every paper citation in a docstring or comment names a paper of mpdp.protocols.papers.PAPERS (issue 21 item 5),
and each of those names its arXiv id with version, or its proceedings when it has no arXiv id (002)."""

import ast
import pathlib
import re

import pytest

from mpdp.protocols.papers import PAPERS, cite

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: ``000 Theorem 3.3``, ``002 eq. (5)``, ``001 §III``, ``000's Figure 2``: a three-digit key before a locator.
CITATION = re.compile(r"\b(\d{3})(?:'s)? (?:Theorems?|Corollary|Lemma|Definition|Proposition|Example|Fig\.|Figure|"
                      r"Section|§|eqs?\.|Eq\.|Appendix|Remark)")
ARXIV = re.compile(r"^\d{4}\.\d{4,5}v\d+$")


def _sources(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """The rooms' sources and stubs (not a compiled ``.pyc``, in ``__pycache__`` or stray)."""
    return sorted(p for room in ("protocols", "analysis", "broker", "parties") for p in (root / room).rglob("*.py*")
                  if p.suffix in (".py", ".pyi"))


def test_the_sources_are_python_text_only(tmp_path: pathlib.Path) -> None:
    """A stray .pyc beside the sources (or in __pycache__) is no source: reading it as text crashed the checks."""
    for name in ("protocols/a.py", "protocols/a.pyi", "protocols/b.pyc", "parties/__pycache__/a.cpython-311.pyc"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"\xff\x00")
    assert [p.relative_to(tmp_path).as_posix() for p in _sources(tmp_path)] == ["protocols/a.py", "protocols/a.pyi"]


def _docstrings(path: pathlib.Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))]
    return [doc for doc in (ast.get_docstring(n) for n in nodes) if doc]


def citations(text: str) -> list[str]:
    """The paper keys ``text`` cites."""
    return CITATION.findall(text)


@pytest.mark.parametrize(("text", "keys"), [
    ("the optimum of 000 Theorem 3.3 at delta", ["000"]),
    ("002 eqs. (4), (6) (000 eqs. (12), (14))", ["002", "000"]),
    ("001's Fig. 2 and 003 Lemma 1", ["001", "003"]),
    ("15 parties, 200 repetitions", []),
])
def test_what_counts_as_a_citation(text: str, keys: list[str]) -> None:
    assert citations(text) == keys


def test_every_citation_names_a_known_paper() -> None:
    unknown = {f"{path.relative_to(ROOT)}: {key}" for path in _sources() if path.suffix == ".py"
               for doc in _docstrings(path) for key in citations(doc) if key not in PAPERS}
    comments = {f"{path.relative_to(ROOT)}: {key}" for path in _sources()
                for line in path.read_text().splitlines() if "#" in line
                for key in citations(line.split("#", 1)[1]) if key not in PAPERS}
    assert sorted(unknown | comments) == []


def test_the_citations_are_many_and_cite_every_paper() -> None:
    """The regex finds the project's citations (hundreds), of all three papers: a check that cannot pass empty."""
    found = [key for path in _sources() if path.suffix == ".py" for doc in _docstrings(path) for key in citations(doc)]
    assert len(found) > 200 and set(found) == set(PAPERS)


@pytest.mark.parametrize("key", sorted(PAPERS))
def test_each_paper_names_its_arxiv_id_and_version_or_its_proceedings(key: str) -> None:
    paper = PAPERS[key]
    if paper.arxiv is None:
        assert re.search(r"pp\. \d+-\d+", paper.venue), "no arXiv id: the proceedings with pages"
    else:
        assert ARXIV.match(paper.arxiv), paper.arxiv
        assert f"arXiv:{paper.arxiv}" in cite(key)
        # CITATION.cff and pyproject's URLs name the same arXiv id
        bare = paper.arxiv.split("v")[0]
        assert bare in (ROOT / "CITATION.cff").read_text() and f"arxiv.org/abs/{bare}" in (ROOT / "pyproject.toml").read_text()
    assert paper.title in (ROOT / "CITATION.cff").read_text()


def test_an_unknown_key_is_named_in_the_error() -> None:
    with pytest.raises(KeyError, match="paper '003': one of 000, 001, 002"):
        cite("003")
