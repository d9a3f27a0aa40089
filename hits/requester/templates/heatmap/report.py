"""The heatmap study's table: per round, model and question, how the answers fall and their mean.

Judgements are the answers that count (not gold, not rejected or flagged
work, as ``hits.requester.answers.counted_submissions`` says), in item terms
(model names), checked against the log of heatmap requests
(``hits.requester.heatmaps.log``): a report-round answer counts only for the sentence
whose heatmaps the page showed, a custom-round answer only for a prompt whose
heatmaps were made for that assignment; a model marked missing counts as "no
heatmap" only if its heatmap did fail then, and a rating of a heatmap that
never came is left out. Agreement is Krippendorff's alpha (ordinal) per
question: in round one a unit is (image, sentence, model); in round two every
worker writes their own prompt, so a unit is (image, model): whether workers
agree about a model on an image, whatever they asked it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import median
from typing import Any

import pandas as pd
from sqlalchemy.orm import Session

from hits.requester.heatmaps.log import campaign_requests
from hits.requester.templates.base import TemplateAgreement
from hits.requester.templates.heatmap.questions import QUESTIONS, ROUNDS, SCALE

ROUND_TITLES = {"report": "Round 1: report sentences", "custom": "Round 2: the workers' own sentences"}
BANDS = {
    "coverage": ("0-20", "20-40", "40-60", "60-80", "80-100"),
    "share": ("0-20", "20-40", "40-60", "60-80", "80-100"),
    "intuitive": ("1", "2", "3", "4", "5"),
}
FAILED = ("failed", "timeout", "unavailable")


@dataclass(frozen=True)
class Judgement:
    """One worker's ratings of one model's heatmap (None: no heatmap came) for one text of one item."""

    item_id: str
    worker_id: str
    round: str
    #: The text's identity within the item: the sentence index, or the assignment and its prompt.
    text: str
    model: str
    ratings: dict[str, int] | None


@dataclass
class Study:
    """What the table is made of: the judgements, what was left out and why, and the request log."""

    judgements: list[Judgement] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)
    #: (round, model) -> status -> count, and (round, model) -> milliseconds of answered requests.
    requests: dict[tuple[str, str], Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    milliseconds: dict[tuple[str, str], list[int]] = field(default_factory=lambda: defaultdict(list))


def campaign_study(session: Session, campaign_id: int) -> Study:
    """The judgements that count in a heatmap campaign, checked against what its pages were shown."""
    from hits.requester.answers import counted_submissions, item_places

    study = Study()
    shown: dict[tuple[str, int], dict[str, Any]] = defaultdict(
        lambda: {"sentence": None, "report": {}, "custom": defaultdict(dict)}
    )
    for row in campaign_requests(session, campaign_id):
        study.requests[(row.round, row.model)][row.status] += 1
        if row.milliseconds is not None and row.status == "ok":
            study.milliseconds[(row.round, row.model)].append(row.milliseconds)
        seen = shown[(row.assignment_id, row.position)]
        if row.round == "report":
            if seen["sentence"] is None:
                seen["sentence"] = row.sentence
            if row.sentence == seen["sentence"]:
                seen["report"].setdefault(row.model, set()).add(row.status)
        else:
            seen["custom"][row.prompt].setdefault(row.model, set()).add(row.status)
    item_at = item_places(session, campaign_id)
    for submission in counted_submissions(session, campaign_id):
        for position, answer in enumerate(submission.answers.get("answers", [])):
            item = item_at.get((submission.published_hit_id, position))
            if item is None or not isinstance(answer, dict):
                continue  # gold, or not an answer of this template
            page = shown.get((submission.assignment_id, position))
            for part in ROUNDS:
                if part == "report":
                    matches = page is not None and page["sentence"] == answer.get("sentence")
                    statuses = page["report"] if page is not None and matches else None
                    text = str(answer.get("sentence"))
                else:
                    statuses = page["custom"].get(answer.get("prompt")) if page is not None else None
                    text = f"{submission.assignment_id}:{answer.get('prompt')}"
                if statuses is None:
                    study.left_out[f"{part}: heatmaps never shown for the text answered"] += 1
                    continue
                for model, ratings in answer.get(part, {}).items():
                    failed = bool(statuses.get(model, set()) & set(FAILED))
                    worked = "ok" in statuses.get(model, set())
                    if ratings is None and not failed:
                        study.left_out[f"{part}: marked missing, but its heatmap was shown"] += 1
                    elif ratings is not None and not worked:
                        study.left_out[f"{part}: rated, but its heatmap never came"] += 1
                    else:
                        study.judgements.append(
                            Judgement(item, submission.worker_id, part, text, model, ratings)
                        )
    return study


@dataclass(frozen=True)
class QuestionRow:
    """One model's answers to one question in one round."""

    model: str
    rated: int
    no_heatmap: int
    #: Share of the ratings at each answer 1..5.
    shares: tuple[float, ...]
    mean: float | None


@dataclass(frozen=True)
class RoundTable:
    """One round: per question, a row per model, and the question's agreement."""

    round: str
    judgements: int
    workers: int
    items: int
    rows: dict[str, list[QuestionRow]]
    alpha: dict[str, float | None]


def _alpha(judgements: list[Judgement], questions: Iterable[str]) -> float | None:
    """Krippendorff's alpha (ordinal) over the units (round, image, text, model, question) of ``questions``.

    In round two the text is left out of the unit: every worker asks their own.
    """
    from hits.requester.answers import krippendorff_alpha

    asked = list(questions)
    rows = [
        (
            f"{j.round}#{j.item_id}#{j.text if j.round == 'report' else ''}#{j.model}#{q}",
            j.worker_id,
            j.ratings[q],
        )
        for j in judgements
        if j.ratings is not None
        for q in asked
    ]
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    # One rating per worker and unit (a worker's own repeated prompts on an image: the first).
    frame = frame.drop_duplicates(["task", "worker"])
    return krippendorff_alpha(frame, "ordinal")


def study_agreement(session: Session, campaign_id: int) -> TemplateAgreement:
    """The dashboard's agreement: every unit of every question pooled, and per round and question."""
    judgements = campaign_study(session, campaign_id).judgements
    parts = {
        f"round {ROUNDS.index(t.round) + 1}, {QUESTIONS[q][0]}": alpha
        for t in round_tables(judgements)
        for q, alpha in t.alpha.items()
    }
    return TemplateAgreement(_alpha(judgements, QUESTIONS), parts)


def round_tables(judgements: Iterable[Judgement]) -> list[RoundTable]:
    """One table per round that has judgements, models in alphabetical order."""
    tables = []
    every = list(judgements)
    for part in ROUNDS:
        these = [j for j in every if j.round == part]
        if not these:
            continue
        models = sorted({j.model for j in these})
        rows: dict[str, list[QuestionRow]] = {}
        for question in QUESTIONS:
            rows[question] = []
            for model in models:
                mine = [j for j in these if j.model == model]
                given = [j.ratings[question] for j in mine if j.ratings is not None]
                counts = Counter(given)
                rows[question].append(
                    QuestionRow(
                        model,
                        len(given),
                        sum(j.ratings is None for j in mine),
                        tuple(counts[v] / len(given) if given else 0.0 for v in SCALE),
                        sum(given) / len(given) if given else None,
                    )
                )
        tables.append(
            RoundTable(
                part,
                len(these),
                len({j.worker_id for j in these}),
                len({j.item_id for j in these}),
                rows,
                {q: _alpha(these, [q]) for q in QUESTIONS},
            )
        )
    return tables


def _aligned(rows: list[list[str]], left: int) -> list[str]:
    """Rows as text columns: the first ``left`` columns flush left, the others flush right."""
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return [
        "    "
        + "  ".join(
            c.ljust(w) if k < left else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]


def _alpha_text(alpha: float | None) -> str:
    return "n/a" if alpha is None else f"{alpha:.2f}"


def format_tables(tables: list[RoundTable], study: Study) -> str:
    """The tables as text: per round and question, each answer's share per model and the mean."""
    out: list[str] = []
    for table in tables:
        out.append(
            f"{ROUND_TITLES[table.round]}: {table.judgements} judgements, "
            f"{table.workers} workers, {table.items} images"
        )
        for question, rows in table.rows.items():
            label, text, _ = QUESTIONS[question]
            out.append(
                f"  {label}: {text}  (Krippendorff's alpha, ordinal: {_alpha_text(table.alpha[question])})"
            )
            heads = ["model", "rated", *BANDS[question], "mean", "no heatmap"]
            body = [
                [
                    r.model,
                    str(r.rated),
                    *(f"{s * 100:.0f}%" for s in r.shares),
                    "-" if r.mean is None else f"{r.mean:.2f}",
                    str(r.no_heatmap),
                ]
                for r in rows
            ]
            out += _aligned([heads, *body], 1)
        out.append("")
    out.append("Heatmap requests (every model's outcome, from the pages' requests)")
    heads = ["round", "model", "ok", "failed", "timeout", "unavailable", "pending", "median ms"]
    body = []
    for (part, model), counts in sorted(study.requests.items()):
        times = study.milliseconds.get((part, model), [])
        statuses = [str(counts.get(s, 0)) for s in ("ok", *FAILED, "pending")]
        body.append([part, model, *statuses, f"{median(times):.0f}" if times else "-"])
    out += _aligned([heads, *body], 2)
    if study.left_out:
        out.append("")
        out.append("Left out: " + "; ".join(f"{n} x {why}" for why, n in sorted(study.left_out.items())))
    return "\n".join(out)


CSV_HEADER = [
    "round",
    "model",
    "question",
    "rated",
    "share_1",
    "share_2",
    "share_3",
    "share_4",
    "share_5",
    "mean",
    "no_heatmap",
    "alpha",
]


def csv_rows(tables: list[RoundTable]) -> list[list[str]]:
    """One row per round, model and question, shares as fractions (answer 1 is the lowest band)."""
    rows = []
    for table in tables:
        for question, found in table.rows.items():
            alpha = table.alpha[question]
            for r in found:
                rows.append(
                    [
                        table.round,
                        r.model,
                        question,
                        str(r.rated),
                        *(f"{s:.4f}" for s in r.shares),
                        "" if r.mean is None else f"{r.mean:.4f}",
                        str(r.no_heatmap),
                        "" if alpha is None else f"{alpha:.4f}",
                    ]
                )
    return rows
