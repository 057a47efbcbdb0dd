"""The three papers mpdp implements, by the key every docstring cites them with (``000 Theorem 3.3``,
``002 eq. (5)``, ``001 §III``): the bibliography of the citations, with arXiv id and version where there is one.

Theorem, equation, section and figure numbers in the docstrings are those of the version named here (the text the
project was built from). tests/test_citations.py checks that every citation in a docstring names a key of
:data:`PAPERS` and that each entry names its arXiv id with version, or its proceedings where it has no arXiv id.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PAPERS", "Paper", "cite"]


@dataclass(frozen=True, slots=True)
class Paper:
    """One paper: who, what, and the version whose numbering the docstrings cite.

    Attributes:
        authors: family names, in the paper's order.
        title: the paper's title.
        arxiv: ``"NNNN.NNNNNvV"`` (id and version), or None when the paper is not on arXiv.
        venue: where it appeared (the reference when ``arxiv`` is None).
    """

    authors: tuple[str, ...]
    title: str
    arxiv: str | None
    venue: str

    @property
    def reference(self) -> str:
        """``"Kairouz, Oh, Viswanath. The Composition ... arXiv:1311.0776v4 (ICML 2015 ...)"``."""
        where = f"arXiv:{self.arxiv} ({self.venue})" if self.arxiv else self.venue
        return f"{', '.join(self.authors)}. {self.title}. {where}"


#: The papers by citation key. 000's numbering (Theorems 3.1-3.4, §4 calibration, §5.2 and eqs. (9)-(15) for the
#: multi-party model) is that of arXiv v4, the journal version whose abstract adds multi-party computation.
#: 001: arXiv 2102.05172 v1, the ISIT 2021 paper (its numbering: Theorems 1-4, Lemmas 1-4 in the appendix).
#: 002 is not on arXiv: its NeurIPS proceedings pages are the reference.
PAPERS: dict[str, Paper] = {
    "000": Paper(("Kairouz", "Oh", "Viswanath"), "The Composition Theorem for Differential Privacy", "1311.0776v4",
                 "ICML 2015, PMLR 37:1376-1385; IEEE Trans. Inf. Theory 63(6), 2017"),
    "001": Paper(("D'Oliveira", "Médard", "Sadeghi"), "Differential Privacy for Binary Functions via Randomized Graph "
                 "Colorings", "2102.05172v1", "IEEE ISIT 2021"),
    "002": Paper(("Kairouz", "Oh", "Viswanath"), "Secure Multi-party Differential Privacy", None,
                 "NeurIPS 2015 (Advances in Neural Information Processing Systems 28), pp. 2008-2016"),
}


def cite(key: str) -> str:
    """The full reference of a citation key, e.g. ``cite("000")``.

    Raises:
        KeyError: a key that is not in :data:`PAPERS` (the message lists the keys).
    """
    try:
        return PAPERS[key].reference
    except KeyError:
        raise KeyError(f"paper {key!r}: one of {', '.join(PAPERS)}") from None
