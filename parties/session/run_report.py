"""The report of a finished run directory (``mpdp report RUN_DIR``, ``mpdp.report``).

Three kinds of directory are read, by the files they hold:

- ``results.json`` (+ ``transcripts.sqlite``): ``mpdp simulate --out DIR``;
- ``sweep.json``: ``mpdp sweep --out DIR``;
- ``decisions.json`` (+ ``transcripts.sqlite``): a deployment's ``mpdp observe --out DIR``.

The page (:class:`mpdp.analysis.reports.report_page.ReportPage`) shows the configuration, the per-round table
(a sweep: one row per point), the accuracy figures re-drawn from the JSON with the project's plot helpers
(:func:`mpdp.analysis.reports.report.plot_rounds`, :meth:`mpdp.analysis.sweeps.sweep.SweepResult.plot`), each party's
privacy spent by the optimal composition against basic composition (the ``privacy`` section), the
rejected messages by reason and the per-round timings from the SQLite transcript store, when recorded.
:func:`write_report` writes ``report.html`` (self-contained), ``report.md`` and the figures as PNG.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mpdp import __version__ as mpdp_version
from mpdp.analysis.plot_style import save_figure
from mpdp.analysis.reports.documents import SCHEMA_VERSION
from mpdp.analysis.reports.report import RoundResult, plot_decisions, plot_privacy_spent, plot_rounds
from mpdp.analysis.reports.report_page import (
    ReportFigure,
    ReportPage,
    Section,
    Table,
    cells,
    render_html,
    render_markdown,
)
from mpdp.analysis.sweeps.grid import grid_text
from mpdp.analysis.sweeps.sweep import SweepPoint, SweepResult
from mpdp.parties.rounds.store import TranscriptStore, check_store_file
from mpdp.parties.session.output_paths import RUN_RESULTS
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import noun

__all__ = ["DATA_FILES", "ReportFiles", "build_page", "write_report"]

_STORE = "transcripts.sqlite"
#: Stand-ins for an undecided round's null measured figures, never shown (its cells are dashes).
_UNMEASURED = {"correct": 0, "empirical_accuracy": 0.0, "ci_low": 0.0, "ci_high": 1.0, "p_value": 1.0,
               "consistent": True}
_PRIVACY_NOTE = ("Each party's privacy spent over the rounds it answered: the exact optimal composition "
                 "(000 Theorem 3.3, at the run's delta_tilde) against basic composition (the sum of the "
                 "epsilons).")


@dataclass(frozen=True)
class ReportFiles:
    """What :func:`write_report` wrote (``mpdp.ReportFiles``; not ``slots=True``, see
    :class:`mpdp.parties.api.result.Result`: assigning it raises FrozenInstanceError).

    Attributes:
        html: the self-contained page. markdown: the Markdown summary. figures: its PNG figures.
        kind: ``simulate``, ``sweep`` or ``deployment``. rows: rows of the per-round (per-point) table.
    """

    html: Path
    markdown: Path
    figures: tuple[Path, ...]
    kind: str
    rows: int

    def _repr_html_(self) -> str:
        return f'<a href="{self.html.as_uri()}">{self.html.name}</a> ({self.kind}, {self.rows} rows)'


def _load(path: Path) -> dict[str, Any]:
    try:
        document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ParameterError("run_dir", str(path), "a readable JSON document written by mpdp",
                             hint=str(exc)[:200]) from None
    if not isinstance(document, dict):
        raise ParameterError("run_dir", str(path), "a JSON object written by mpdp", hint=type(document).__name__)
    # a document without the header is an older mpdp's (the same keys: read as is); another shape is refused
    version = document.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise ParameterError("run_dir", str(path), f"a document of schema_version {SCHEMA_VERSION} or an older "
                             f"one without a header (this is mpdp {mpdp_version})",
                             hint=f"it has schema_version {version!r}, from mpdp {document.get('mpdp_version')}")
    return document


def _number(value: object) -> float:
    return math.inf if value == "inf" else float(value)  # type: ignore[arg-type]


def _privacy_section(privacy: dict[str, Any] | None) -> Section | None:
    if not privacy:
        return None
    parties = privacy["parties"]
    optimal = [_number(p["epsilon_optimal"]) for p in parties]
    basic = [_number(p["epsilon_basic"]) for p in parties]
    summary = privacy["summary"]
    summary_table = Table("epsilon spent per party (nats)", ("composition", "median", "max"), (
        ("optimal (000, exact)", *cells([summary["epsilon_optimal"]["median"], summary["epsilon_optimal"]["max"]])),
        ("basic (sum)", *cells([summary["epsilon_basic"]["median"], summary["epsilon_basic"]["max"]]))))
    per_party = Table("each party", ("party", "rounds answered", "releases", "epsilon optimal", "epsilon basic",
                                     "delta", "rounds refused"),
                      tuple(cells([p["id"], p["rounds_answered"], p["releases"], p["epsilon_optimal"],
                                   p["epsilon_basic"], p["delta"], p["rounds_refused"]]) for p in parties),
                      "privacy", folded=True)
    budget = privacy.get("budget")
    budget_text = "none" if budget is None else f"({budget['epsilon']}, {budget['delta']:g})"
    text = (f"delta_tilde = {privacy['delta_slack']:g}; {privacy['releases_per_answer']} release(s) per answered "
            f"round; budget: {budget_text}; "
            f"{summary['parties_out_of_budget']} of {summary['parties']} {noun(summary['parties'], 'party', 'parties')} ran out of budget.")
    figure = plot_privacy_spent(optimal, basic, title="privacy spent: its distribution over the parties, "
                                                      "optimal against basic composition")
    return Section("Privacy spent", (_PRIVACY_NOTE, text), (summary_table, per_party),
                   (ReportFigure("privacy", "the distribution of the epsilon spent by the parties (empirical CDF), "
                                                "optimal against basic composition", figure),))


def _store_sections(run_dir: Path, session: str) -> list[Section]:
    """Rejected messages by reason and per-round timings from the transcript store (if recorded)."""
    path = run_dir / _STORE
    if not path.exists():
        return [Section("Rejected messages", (f"no {_STORE} in this directory: not recorded.",))]
    check_store_file(path)  # a damaged store: one line, and no report file is written
    with TranscriptStore(path) as store:
        rejects = store.rejects(session)
        created = store.sessions().get(session, {}).get("created")
        decided = store.decided_times(session)
    by_reason: Counter[str] = Counter()
    rounds_of: dict[str, set[int]] = {}
    for (rnd, reason), count in rejects.items():
        by_reason[reason] += count
        rounds_of.setdefault(reason, set()).add(rnd)
    reject_table = Table("rejected messages by reason", ("reason", "messages", "rounds"), tuple(
        (reason, str(n), ", ".join("before round 1" if r < 0 else str(r + 1) for r in sorted(rounds_of[reason])))
        for reason, n in by_reason.most_common()), "rejects")
    reject_text = (f"{sum(by_reason.values())} message(s) rejected (never recorded as data)." if by_reason
                   else "No message was rejected.")
    sections = [Section("Rejected messages", (reject_text,), (reject_table,) if by_reason else ())]
    if decided:
        start = float(created) if isinstance(created, (int, float)) else min(decided.values())
        rows, previous = [], start
        for rnd, when in sorted(decided.items()):
            rows.append((str(rnd + 1), f"{when - previous:.3f}", f"{when - start:.3f}"))
            previous = when
        sections.append(Section("Timings", (f"from the transcript store ({_STORE}): each round's time from "
                                            "the previous decision (the first: from the session's start).",),
                                (Table("per-round time (s)", ("round", "seconds", "since start"), tuple(rows),
                                       "timings", folded=len(rows) > 20),)))
    return sections


def _unfinished_page(run_dir: Path, doc: dict[str, Any]) -> tuple[ReportPage, int]:
    """A simulation that has not completed (``run.status`` running, failed or interrupted): each round's
    status, the error and how to continue, then what its transcript store holds."""
    run = doc["run"]
    config = (("session", doc["session"]), ("protocol", doc["protocol"]), ("dataset", doc["dataset"]),
              ("function", doc["function"]), ("parties", str(len(doc["parties"]))),
              ("repetitions", str(doc["repetitions"])), ("status", run["status"]), ("mpdp version", doc["mpdp_version"]))
    table = Table("each round's status", ("round", "name", "status"),
                  tuple(cells([r["round"] + 1, r["name"], r["status"]]) for r in run["rounds"]), "rounds")
    paragraphs = (f"The run {run['status']}: {run['rounds_decided']} of {len(run['rounds'])} rounds decided, "
                  "kept in its transcript store; no accuracy is reported before the run is complete.",
                  f"Error: {run['error']}" if run["error"] else "", f"To continue: {run['resume']}")
    sections = [Section("Rounds", tuple(p for p in paragraphs if p), (table,)), *_store_sections(run_dir, doc["session"])]
    return (ReportPage(f"mpdp simulate: {doc['session']} ({run['status']})", f"{doc['dataset']}: {run['status']}",
                       config, tuple(sections)), len(run["rounds"]))


def _simulate_page(run_dir: Path, doc: dict[str, Any]) -> tuple[ReportPage, int]:
    if doc.get("run", {}).get("status", "complete") != "complete":
        return _unfinished_page(run_dir, doc)
    entries = doc["rounds"]
    decided = [r.get("empirical_accuracy") is not None for r in entries]  # null: the round was not decided
    rounds = [RoundResult.from_json(r if d else r | _UNMEASURED) for r, d in zip(entries, decided, strict=True)]
    eps = sorted({p["epsilon"] for p in doc["parties"]})
    eps_text = f"{eps[0]:g}" if len(eps) == 1 else f"{eps[0]:g} to {eps[-1]:g} (per party)"
    title = (f"{doc['dataset']}: {doc['protocol']}, {doc['function']}, epsilon {eps_text}, "
             f"{doc['repetitions']} repetitions")
    config = (("session", doc["session"]), ("protocol", doc["protocol"]), ("dataset", doc["dataset"]),
              ("function", doc["function"]), ("parties", str(len(doc["parties"]))), ("epsilon (nats)", eps_text),
              ("delta", ", ".join(f"{d:g}" for d in sorted({p["delta"] for p in doc["parties"]}))),
              ("decision rule", doc["rule"]), ("repetitions", str(doc["repetitions"])),
              ("seed", f"{doc['seed']} ({'given' if doc['seed_given'] else 'drawn'})"), ("mode", doc["mode"]),
              ("broker", f"{doc['broker']['kind']} {doc['broker']['url']}"), ("alpha", f"{doc['alpha']:g}"),
              ("wall time (s)", f"{doc['wall_time_s']:.2f}"), ("mpdp version", doc["mpdp_version"]))
    measured = [r for r, d in zip(rounds, decided, strict=True) if d]
    consistent = sum(r.consistent for r in measured)
    table = Table("per round: measured accuracy (95% Clopper-Pearson) against the exact theory",
                  ("round", "parties", "yes", "f(x)", "repetitions", "measured", "interval", "theory", "p-value",
                   "consistent", "status", "absent", "received", "rejected"),
                  tuple(cells([r.round, r.n_parties, r.yes_count, r.truth, r.repetitions,
                               r.empirical_accuracy if d else None, f"[{r.ci_low:.3f}, {r.ci_high:.3f}]" if d else None,
                               r.theoretical_accuracy, r.p_value if d else None, r.consistent if d else None,
                               entry.get("status", "-"), entry.get("absent"), r.messages_received,
                               r.messages_rejected]) for r, d, entry in zip(rounds, decided, entries, strict=True)),
                  "rounds")
    undecided = len(rounds) - len(measured)
    accuracy = Section("Rounds", (f"{consistent} of {len(measured)} decided rounds consistent with theory (two-sided "
                                  f"test, Bonferroni at alpha = {doc['alpha']:g})"
                                  + (f"; {undecided} round(s) not decided (no answer, or every party abstained)."
                                     if undecided else "."), doc["note"]), (table,),
                       (ReportFigure("accuracy", "measured accuracy per decided round against theory",
                                     plot_rounds(measured, title=title)),) if measured else ())
    sections = [accuracy]
    privacy = _privacy_section(doc.get("privacy"))
    if privacy is not None:
        sections.append(privacy)
    sections += _store_sections(run_dir, doc["session"])
    return ReportPage(f"mpdp simulate: {doc['session']}", title, config, tuple(sections)), len(rounds)


def _sweep_page(doc: dict[str, Any]) -> tuple[ReportPage, int]:
    points = tuple(SweepPoint(**p) for p in doc["points"])
    result = SweepResult(points, doc["inputs"], doc["alpha"], doc["source"])
    how = "live runs over a broker" if result.source == "live" else "Monte Carlo"
    inputs = doc["inputs"]
    config = tuple((str(k), grid_text(v) if k == "epsilon" and isinstance(v, list) and v else
                    ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v) if isinstance(v, list)
                    else str(v)) for k, v in inputs.items())
    config += ((() if "alpha" in inputs else (("alpha", f"{doc['alpha']:g}"),))
               + (("test", doc["test"]), ("mpdp version", doc["mpdp_version"])))
    table = Table(f"per point: exact theory against {how}", (
        "epsilon", "k", "delta", "f", "rule", "observer", "theory", "worst case", "curator (001)", "measured",
        "interval", "p-value", "consistent"), tuple(cells([
            p.epsilon, p.parties, p.delta, p.function, p.rule, p.observer, p.theoretical_accuracy,
            p.theoretical_worst_case, p.curator_accuracy, p.empirical_accuracy, f"[{p.ci_low:.3f}, {p.ci_high:.3f}]",
            p.p_value, p.consistent]) for p in points), "rounds")
    flagged = sum(not p.consistent for p in points)
    eps = [p.epsilon for p in points]
    per = "point" if inputs.get("dataset") is None else f"round of {inputs['dataset']}"
    subtitle = (f"{len(points)} points, epsilon {min(eps):g} to {max(eps):g} nats, {inputs.get('samples')} "
                f"samples per {per}: {len(points) - flagged} consistent with theory")
    section = Section("Points", (f"{flagged} of {len(points)} points inconsistent with theory.",), (table,),
                      (ReportFigure("sweep", f"accuracy against epsilon: theory and {how}", result.plot()),))
    return ReportPage("mpdp sweep", subtitle, config, (section,)), len(points)


def _deployment_page(run_dir: Path, doc: dict[str, Any]) -> tuple[ReportPage, int]:
    rounds = doc["rounds"]

    def mean(values: list[float] | None) -> float:  # None: an undecided round has no posterior
        return sum(values) / len(values) if values else math.nan

    config = (("session", doc["session"]), ("function", str(doc["function"])), ("repetitions", str(doc["repetitions"])),
              ("mode", doc["mode"]), ("broker", doc["broker"]), ("store", doc["store"]),
              ("mpdp version", doc["mpdp_version"]))
    table = Table("per round: the observer's decision and its posterior (the observer does not know the bits)", (
        "round", "name", "status", "voting", "abstained", "absent", "received", "rejected", "decision",
        "P(decision | transcript)", "E[ones | transcript]"), tuple(cells([
            r["round"] + 1, r["name"], r["status"], len(r["participants"]), len(r["abstained"]), len(r["absent"]),
            r["messages_received"], r["messages_rejected"], Counter(r["decisions"]).most_common(1)[0][0],
            mean(r["posterior_of_decision"]), mean(r["expected_ones"])]) for r in rounds), "rounds")
    title = f"deployed session {doc['session']}: {doc['function']}, {len(rounds)} {noun(len(rounds), 'round')}"
    figure = plot_decisions([r["name"] for r in rounds], [mean(r["posterior_of_decision"]) for r in rounds],
                            title=title)
    sections = [Section("Rounds", (), (table,), (ReportFigure("decisions", "the observer's posterior of its decision "
                                                                           "per round", figure),))]
    privacy = _privacy_section(doc.get("privacy"))
    if privacy is not None:
        sections.append(privacy)
    sections += _store_sections(run_dir, doc["session"])
    return ReportPage(f"mpdp deployment: {doc['session']}", title, config, tuple(sections)), len(rounds)


def build_page(run_dir: str | Path) -> tuple[ReportPage, str, int]:
    """The report page of ``run_dir``, its kind and the rows of its per-round (per-point) table.

    Raises:
        ParameterError: ``run_dir`` is not a directory, or holds none of :data:`mpdp.parties.session.output_paths.RUN_RESULTS`, or a file
            there is not the JSON mpdp writes.
    """
    directory = Path(run_dir)
    if not directory.is_dir():
        raise ParameterError("run_dir", str(run_dir), "an existing directory written by mpdp simulate/sweep/observe --out")
    present = [name for name in RUN_RESULTS if (directory / name).exists()]
    if len(present) > 1:
        raise ParameterError("run_dir", str(run_dir), "the folder of one run (one of " + ", ".join(RUN_RESULTS) + ")",
                             hint=f"it holds {' and '.join(present)}, the results of "
                                  f"{' and '.join(RUN_RESULTS[n] for n in present)} runs: move one to its own folder")
    for name, kind in RUN_RESULTS.items():
        path = directory / name
        if path.exists():
            doc = _load(path)
            try:
                if kind == "simulate":
                    page, rows = _simulate_page(directory, doc)
                elif kind == "sweep":
                    page, rows = _sweep_page(doc)
                else:
                    page, rows = _deployment_page(directory, doc)
            except (KeyError, TypeError) as exc:
                raise ParameterError("run_dir", str(path), f"the {name} that mpdp {kind if kind != 'deployment' else 'observe'} "
                                     "writes", hint=f"missing or malformed: {exc}") from None
            return page, kind, rows
    raise ParameterError("run_dir", str(run_dir), "a directory holding " + ", ".join(
        f"{n} (mpdp {'observe' if k == 'deployment' else k} --out)" for n, k in RUN_RESULTS.items()))


#: The data files a report links to when they are in the run directory, in this order.
DATA_FILES = ("results.json", "sweep.json", "sweep.csv", "decisions.json", _STORE)


def _data_links(run_dir: Path, target: Path) -> tuple[tuple[str, str], ...]:
    """(name, href relative to the page in ``target``) of each of :data:`DATA_FILES` in ``run_dir``."""
    return tuple((name, Path(os.path.relpath(run_dir / name, target)).as_posix()) for name in DATA_FILES
                 if (run_dir / name).is_file())


def write_report(run_dir: str | Path, out: str | Path | None = None) -> ReportFiles:
    """Write ``report.html`` (self-contained), ``report.md`` and ``report-<figure>.png`` for ``run_dir``.

    Args:
        run_dir: a finished run's directory (:data:`mpdp.parties.session.output_paths.RUN_RESULTS`). out: where to write (default: ``run_dir``;
            created if missing). Earlier report files there are replaced.

    Returns:
        :class:`ReportFiles`.

    Raises:
        ParameterError: as :func:`build_page`; ``out`` not a writable directory.
    """
    from mpdp.parties.session.output_paths import output_dir

    page, kind, rows = build_page(run_dir)
    target = output_dir(out if out is not None else run_dir, "--out")
    page = replace(page, links=_data_links(Path(run_dir), target))
    figures = {f.name: f"report-{f.name}.png" for f in page.figures}
    written = tuple(save_figure(f.figure, target / figures[f.name]) for f in page.figures)
    html_path = target / "report.html"
    html_path.write_text(render_html(page), encoding="utf-8")
    md_path = target / "report.md"
    md_path.write_text(render_markdown(page, figures), encoding="utf-8")
    return ReportFiles(html_path, md_path, written, kind, rows)
