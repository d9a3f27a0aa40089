"""A heatmap campaign through the pipeline: bots over HTTP, gold, marketplace answers synced, results."""

from __future__ import annotations

import io
import json
import random
from typing import Any

import numpy as np
from bs4 import BeautifulSoup
from sqlalchemy import select

from demo.crowd import Bot, Profile
from demo.tasks import get_demo_task
from demo.tasks.heatmap import MODELS, PLACES, judge_heat, sentence_for
from hits.db import session_scope
from hits.requester.campaigns.export import write_batch_csv
from hits.requester.heatmaps.arrays import checked, heat_of_overlay, overlay_png
from hits.requester.heatmaps.builtin import BlobProvider
from hits.requester.heatmaps.providers import ImageSource
from hits.requester.quality.aggregation import aggregate_campaign, store_results
from hits.requester.quality.review import grade_submissions
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.tables.templates import SlotArrangement
from hits.requester.templates.heatmap import QUESTIONS
from hits.requester.templates.heatmap.report import campaign_study, round_tables
from tests.helpers import launch_template_campaign, sync_marketplace_answers
from tests.server.test_dashboard import staff_session


def _expected(folder, item: dict, sentence: int, model: str) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """What a careful person answers for ``model``'s heatmap of one of the item's sentences."""
    text = item["sentences"][sentence]["text"]
    place = next(p for p in PLACES if sentence_for(p) == text)
    stored = item["sentences"][sentence]["heatmaps"].get(model)
    if stored:
        heat = np.load(folder / "media" / stored)
    else:
        spec = {k: v for k, v in MODELS[model].items() if k != "provider"}
        heat = BlobProvider(name=model, **spec).heatmap(ImageSource(), text)
    return judge_heat(heat_of_overlay(overlay_png(checked(heat))), place)


def test_careful_workers_ratings_are_stored_per_model_graded_synced_and_tabulated(
    tmp_path, market, mturk, requester_sessions, careful_campaign
) -> None:
    # Both careful workers rate every image.
    campaign_id, truth, hit_ids = careful_campaign("heatmap", hits=2, name="heatmap-campaign")
    items = {
        row["id"]: row["item"] for row in map(json.loads, (tmp_path / "items.jsonl").read_text().splitlines())
    }

    with session_scope(requester_sessions) as session:
        arranged = session.scalars(
            select(SlotArrangement).where(SlotArrangement.campaign_id == campaign_id)
        ).all()
        # Four assignments of three slots (two images and a gold one), each with its own aliases.
        assert len(arranged) == 4 * 3
        tokens = [a["token"] for s in arranged for a in s.arrangement["aliases"]]
        assert len(set(tokens)) == len(tokens)
        submissions = session.scalars(
            select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        graded = grade_submissions(session, [s.id for s in submissions])
        assert all(s.gold_total == 1 and s.gold_correct == 1 for s in graded)  # careful workers pass gold
        slots = {
            (p.id, slot.position): slot.item.external_id
            for p in session.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id))
            for slot in p.slots
            if slot.item is not None
        }
        before = {s.assignment_id: s.answers["answers"] for s in submissions}
        for s in submissions:
            for position, answer in enumerate(s.answers["answers"]):
                item_id = slots.get((s.published_hit_id, position))
                if item_id is None:
                    continue  # the gold slot
                assert (
                    set(answer["report"]) == set(answer["custom"]) == set(MODELS)
                )  # model names, not tokens
                for model in MODELS:
                    assert answer["report"][model] == _expected(
                        tmp_path, items[item_id], answer["sentence"], model
                    )
        aggregated = aggregate_campaign(session, campaign_id)
        # The requester's batch-results CSV names models (unscrambled), one column per question.
        out = io.StringIO()
        assert write_batch_csv(session, campaign_id, out) == 4
        header = out.getvalue().splitlines()[0]
        assert all(f"Answer.heatmap-1-custom-{m}-coverage" in header for m in MODELS)
    assert {a.item_id for a in aggregated} == set(items) and all(a.votes == 2 for a in aggregated)

    # The marketplace holds tokens only; syncing its copy stores model names again, the same answers.
    held = sync_marketplace_answers(mturk, market, requester_sessions, hit_ids)
    assert held and not any(m in json.dumps(fields) for fields in held.values() for m in MODELS)
    with session_scope(requester_sessions) as session:
        after = {s.assignment_id: s for s in session.scalars(select(Submission))}
        assert all(
            after[a].synced and after[a].answers["answers"] == answers for a, answers in before.items()
        )
        study = campaign_study(session, campaign_id)
    assert not study.left_out
    tables = round_tables(study.judgements)
    assert [t.round for t in tables] == ["report", "custom"]
    assert all(t.judgements == 2 * 2 * 2 * len(MODELS) for t in tables)  # HITs x images x workers x models
    focused = {r.model: r for r in tables[0].rows["intuitive"]}
    assert focused["focused"].mean is not None and focused["lost"].mean is not None
    assert focused["focused"].mean > focused["lost"].mean


class _FirstSentence(random.Random):
    """A bot's dice that always pick the first report sentence offered, and are fair otherwise.

    Round one's unit is (picture, sentence, model): two bots picking their
    sentences at random share no unit now and then, and the round's alpha is
    then undefined (n/a), which this test is not about.
    """

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        return 0 if stop is None else super().randrange(start, stop, step)


def _fill_first_sentence(form: Any, truth: Any, profile: Profile, rng: random.Random) -> dict[str, str]:
    return get_demo_task("heatmap").fill_form(form, truth, profile, _FirstSentence(rng.random()))


def test_the_dashboard_shows_the_heatmap_studys_agreement(
    tmp_path, live_server, market, requester_sessions
) -> None:
    """Not n/a: the pooled alpha of every question's units, and the study's alpha per round and question."""
    name = "heatmap-agreement"
    campaign_id, truth, _ = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "heatmap", hits=2, name=name
    )
    for n, profile in enumerate([Profile("perfect", 1.0), Profile("sloppy", 0.5)]):
        bot = Bot(live_server.url, f"agree-{n}", profile, truth, seed=n, fill_form=_fill_first_sentence)
        bot.title_filter = name
        assert bot.run(max_hits=2).submitted == 2
    with session_scope(requester_sessions) as session:
        stored = store_results(session, campaign_id)
        tables = round_tables(campaign_study(session, campaign_id).judgements)
        overall, parts = stored.agreement, stored.agreement_parts
    assert overall is not None and parts is not None
    labels = [QUESTIONS[q][0] for q in QUESTIONS]
    assert list(parts) == [f"round {r}, {label}" for r in (1, 2) for label in labels]
    assert [parts[f"round {r}, {QUESTIONS[q][0]}"] for r in (1, 2) for q in QUESTIONS] == [
        t.alpha[q] for t in tables for q in QUESTIONS
    ]  # the same figures as `hitforge results heatmap`
    assert all(alpha is not None for alpha in parts.values())

    home = staff_session(live_server.url, requester_sessions).get(live_server.url + "/dashboard/")
    row = next(
        tr for tr in BeautifulSoup(home.text, "html.parser").select("#campaigns tbody tr") if name in tr.text
    )
    text = " ".join(row.get_text().split())
    assert f"Krippendorff's alpha {overall:.3f}" in text and "n/a" not in text
    assert f"round 1, Coverage {parts['round 1, Coverage']:.3f}" in text
