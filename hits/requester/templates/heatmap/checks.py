"""A heatmap page's answers checked at submit against what the server knows the page was shown.

The form is the worker's: its list of models (a hidden field), the sentence
and prompt it names, and which models it marks "missing" can all be changed
before sending. What the page was really shown is the server's: the
assignment's arrangement (``hits.requester.templates.arrangements``: every alias the
slot has) and the log of heatmap requests (``hits.requester.heatmaps.log``). An answer
is taken only when

- it rates, or marks missing, every alias of the slot, in both rounds;
- its report sentence is the one whose heatmaps the slot was first shown
  (the worker's choice, locked then), so gold is scored on that sentence;
- its own prompt is one whose heatmaps were made for this slot;
- a model is marked missing only if a request for that text failed for it,
  and rated only if its heatmap for that text was shown.

The results (``report.py``) filter the same way; checking at submit tells the
worker at once and keeps untrue answers out of the store and the marketplace.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.tables.heatmaps import HeatmapRequest
from hits.requester.templates.base import ParsedAnswers

ROUNDS = ("report", "custom")
FAILED = frozenset({"failed", "timeout", "unavailable"})


def normal_text(text: str) -> str:
    """A text as compared with report sentences: case, punctuation and spacing ignored."""
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


def _shown(session: Session, campaign_id: int, assignment_id: str) -> dict[int, dict[str, Any]]:
    """Per slot: the first sentence revealed and, per text, each model's request statuses."""
    slots: dict[int, dict[str, Any]] = defaultdict(
        lambda: {
            "sentence": None,
            "report": defaultdict(set),
            "custom": defaultdict(lambda: defaultdict(set)),
        }
    )
    rows = session.execute(
        select(
            HeatmapRequest.position,
            HeatmapRequest.round,
            HeatmapRequest.sentence,
            HeatmapRequest.prompt,
            HeatmapRequest.model,
            HeatmapRequest.status,
        )
        .where(HeatmapRequest.campaign_id == campaign_id, HeatmapRequest.assignment_id == assignment_id)
        .order_by(HeatmapRequest.id)
    )
    for position, kind, sentence, prompt, model, status in rows:
        slot = slots[position]
        if kind == "report":
            if slot["sentence"] is None:
                slot["sentence"] = sentence
            if sentence == slot["sentence"]:
                slot["report"][model].add(status)
        else:
            slot["custom"][prompt][model].add(status)
    return slots


def _problems(
    i: int, answer: dict[str, Any], aliases: list[dict[str, str]], seen: dict[str, Any]
) -> list[str]:
    """What is untrue in slot ``i``'s answer (page terms: tokens), each naming its form field."""
    field = f"heatmap-{i}"
    tokens = {a["token"] for a in aliases}
    model_of = {a["token"]: a["model"] for a in aliases}
    label_of = {a["token"]: a["label"] for a in aliases}
    problems = []
    for part in ROUNDS:
        given = set(answer.get(part, {}))
        if given != tokens:
            problems.append(
                f"{field}-models: the answer must cover every model on the page ({len(tokens)}), "
                f"not {len(given & tokens)}; reload the page and rate them all"
            )
            return problems
    if seen["sentence"] is None:
        return [f"{field}-sentence: no report sentence's heatmaps were shown; choose one and show them"]
    if answer["sentence"] != seen["sentence"]:
        return [
            f"{field}-sentence: you chose sentence {seen['sentence'] + 1} before seeing any heatmap; "
            "rate its heatmaps"
        ]
    statuses = {"report": seen["report"], "custom": seen["custom"].get(answer["prompt"])}
    if statuses["custom"] is None:
        return [f"{field}-prompt: no heatmaps were made for this sentence; make them, then rate them"]
    for part in ROUNDS:
        for token, ratings in sorted(answer[part].items()):
            got = statuses[part].get(model_of[token], set())
            if ratings is None and not got & FAILED:
                problems.append(
                    f"{field}-{part}-{token}-missing: {label_of[token]}'s heatmap did come; rate it"
                )
            elif ratings is not None and "ok" not in got:
                problems.append(
                    f"{field}-{part}-{token}: {label_of[token]}'s heatmap never came; mark it as missing"
                )
    return problems


def check_against_log(
    session: Session, campaign_id: int, assignment_id: str, parsed: ParsedAnswers
) -> ParsedAnswers:
    """``parsed`` (page terms) with an error per slot whose answer the page was not shown as given."""
    from hits.requester.tables.templates import SlotArrangement

    if not parsed.ok:
        return parsed
    arranged = {
        position: arrangement
        for position, arrangement in session.execute(
            select(SlotArrangement.position, SlotArrangement.arrangement).where(
                SlotArrangement.campaign_id == campaign_id, SlotArrangement.assignment_id == assignment_id
            )
        )
    }
    seen = _shown(session, campaign_id, assignment_id)
    for i, answer in enumerate(parsed.answers):
        aliases = arranged.get(i, {}).get("aliases", [])
        problems = (
            _problems(i, answer, aliases, seen[i])
            if aliases
            else [f"heatmap-{i}: this page was never opened as your assignment; reload it"]
        )
        if problems:
            parsed.errors[f"heatmap-{i}"] = f"Image {i + 1}: " + "; ".join(problems) + "."
    if not parsed.ok:
        parsed.answers = []
    return parsed
