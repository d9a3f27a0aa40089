"""``hitforge results export`` writes nested values (a box, a list of objects) as JSON, never a repr."""

from __future__ import annotations

import csv
import io
import json
import uuid
from typing import Any

import pytest

from hits.db import session_scope
from hits.requester.tables.campaigns import Campaign, HITSlot, Item, PublishedHIT, Submission
from tests.helpers import hitforge_results

BOX = {"x": 102.0, "y": 40.5, "width": 60.0, "height": 30.0}
SEEDS = [{"label": "cat", "box": [1.0, 2.0, 30.0, 40.0]}]
ANSWER = [{"label": "cat", "box": [1.0, 2.5, 30.0, 40.0]}, {"label": "hat", "box": [5.0, 6.0, 7.0, 8.0]}]


def seed(requester_sessions, template: str, payload: dict[str, Any], answer: Any) -> str:  # type: ignore[no-untyped-def]
    """A campaign of ``template`` with one HIT of one item and one submitted assignment; its name."""
    tag = uuid.uuid4().hex[:10].upper()
    with session_scope(requester_sessions) as session:
        campaign = Campaign(
            name=f"json-{tag}", template=template, spec={"title": "t", "reward": "0.10"}, budget=1
        )
        session.add(campaign)
        session.flush()
        item = Item(campaign_id=campaign.id, position=0, external_id=f"item-{tag}", payload=payload)
        published = PublishedHIT(campaign_id=campaign.id, status="complete", mturk_hit_id="3H" + tag)
        session.add_all([item, published])
        session.flush()
        session.add(HITSlot(published_hit_id=published.id, position=0, item_id=item.id))
        session.add(
            Submission(
                assignment_id="3A" + tag,
                published_hit_id=published.id,
                worker_id="A" + tag,
                answers={"answers": [answer]},
                decision="approve",
            )
        )
        return campaign.name


@pytest.fixture
def campaigns(requester_sessions) -> dict[str, str]:  # type: ignore[no-untyped-def]
    image = {"image": "cat.png", "width": 200, "height": 100, "alt": ""}
    return {
        "objects": seed(requester_sessions, "objects", {**image, "objects": SEEDS}, ANSWER),
        "target": seed(
            requester_sessions, "target", {"source": "a cat", "image": "cat.png", "box": BOX}, "A"
        ),
    }


def test_csv_cells_of_nested_values_are_json(settings, campaigns) -> None:  # type: ignore[no-untyped-def]
    for template, name in campaigns.items():
        exported = hitforge_results(settings, "export", name, "--format", "csv")
        assert exported.exit_code == 0, exported.output
        text = exported.stdout
        assert "{'" not in text and "[{'" not in text, text  # no Python repr anywhere
        (row,) = list(csv.DictReader(io.StringIO(text)))
        if template == "objects":
            assert json.loads(row["Input.objects_0"]) == SEEDS
            assert json.loads(row["Answer.objects-0"]) == ANSWER
        else:
            assert json.loads(row["Input.box_0"]) == BOX
            assert row["Input.source_0"] == "a cat"  # a plain string stays as it is
            assert row["Answer.category-0"] == "A"


def test_jsonl_holds_the_stored_values(settings, campaigns) -> None:  # type: ignore[no-untyped-def]
    exported = hitforge_results(settings, "export", campaigns["objects"], "--format", "jsonl")
    assert exported.exit_code == 0, exported.output
    (record,) = [json.loads(line) for line in exported.stdout.splitlines()]
    (slot,) = record["slots"]
    assert slot["input"]["objects"] == SEEDS and slot["answer"] == ANSWER
    exported = hitforge_results(settings, "export", campaigns["target"], "--format", "jsonl")
    (record,) = [json.loads(line) for line in exported.stdout.splitlines()]
    assert record["slots"][0]["input"]["box"] == BOX
