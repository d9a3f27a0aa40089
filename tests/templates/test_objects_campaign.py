"""An objects campaign over HTTP and through the pipeline: triples stored, gold graded, consensus found."""

from __future__ import annotations

import json

from bs4 import BeautifulSoup, Tag
from sqlalchemy import select

from demo.crowd import Bot, Profile
from demo.tasks import get_demo_task
from hits.db import session_scope
from hits.requester.quality.aggregation import aggregate_campaign, campaign_agreement, store_results
from hits.requester.tables.campaigns import HITSlot, Item, PublishedHIT, Submission
from hits.requester.templates.objects.geometry import match_objects
from tests.helpers import hidden_fields, launch_template_campaign, sync_marketplace_answers
from tests.server.worker_helpers import accept_framed, csrf_of


def _rows(folder, name: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return [json.loads(line) for line in (folder / name).read_text().splitlines()]


def test_careful_workers_fix_the_seeds_gold_passes_spam_fails_and_the_consensus_is_the_truth(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    task = get_demo_task("objects")
    name = "objects-campaign"
    campaign_id, truth, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "objects", hits=3, name=name
    )
    careful = Bot(
        live_server.url, "careful-0", Profile("perfect", 1.0), truth, seed=1, fill_form=task.fill_form
    )
    lazy = Bot(
        live_server.url,
        "lazy-0",
        Profile("copycat", 0.0, "majority"),
        truth,
        seed=2,
        fill_form=task.fill_form,
    )
    ids = {}
    for bot in (careful, lazy):  # assignments_per_hit is 2: both do every HIT
        bot.title_filter = name
        result = bot.run(max_hits=3)
        assert result.submitted == 3
        ids[bot.username] = result.worker_id
    careful_id, lazy_id = ids["careful-0"], ids["lazy-0"]

    # The marketplace holds each answer as one JSON field per picture; syncing reads it back and grades gold.
    relayed = sync_marketplace_answers(mturk, market, requester_sessions, hit_ids)

    images = {row["id"]: row["item"]["image"] for row in _rows(tmp_path, "items.jsonl")}
    with session_scope(requester_sessions) as session:
        subs = session.scalars(
            select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        assert len(subs) == 6 and all(s.synced for s in subs)
        for s in subs:
            fields = relayed[s.assignment_id]
            assert [json.loads(fields[f"objects-{k}"]) for k in range(len(fields))] == s.answers["answers"]
            for answer in s.answers["answers"]:  # triples, nothing else
                assert all(set(o) == {"label", "box", "description"} and len(o["box"]) == 4 for o in answer)
        gold = {careful_id: [0, 0], lazy_id: [0, 0]}
        decisions = {s.worker_id: s.decision for s in subs}
        for s in subs:
            gold[s.worker_id][0] += s.gold_correct
            gold[s.worker_id][1] += s.gold_total
        aggregated = aggregate_campaign(session, campaign_id)
        alpha = campaign_agreement(session, campaign_id)
        stored = store_results(session, campaign_id)
        # One item's answers per worker, in page order, to compare with the truth.
        careful_answers = {}
        for s in subs:
            if s.worker_id != careful_id:
                continue
            at = dict(
                session.execute(
                    select(HITSlot.position, Item.external_id)
                    .join(Item, HITSlot.item_id == Item.id)
                    .where(HITSlot.published_hit_id == s.published_hit_id)
                ).all()
            )
            careful_answers.update({at[p]: a for p, a in enumerate(s.answers["answers"]) if p in at})
    assert gold[careful_id][1] == gold[lazy_id][1] == 3  # one gold picture per HIT
    assert gold[careful_id][0] == 3 and gold[lazy_id][0] == 0  # seeds left as they are fail gold
    for item_id, image in images.items():
        assert match_objects(careful_answers[item_id], truth[image]).f1 == 1.0

    # The lazy worker failed every gold picture: the pipeline left their work out (rejected, or held
    # as a flagged worker's), so each picture's consensus is the careful worker's list: the truth.
    assert {decisions[lazy_id]} <= {"reject", "held"} and decisions[careful_id] != "reject"
    assert {a.item_id for a in aggregated} == set(images)
    assert all(a.method == "object_clusters" and a.votes == 1 for a in aggregated)
    for a in aggregated:
        assert all(set(o) == {"label", "box", "description", "support"} for o in a.label)
        assert match_objects(a.label, truth[images[a.item_id]]).f1 == 1.0
        assert a.detail["pairwise_f1"] is None  # one worker: nobody to agree with
    assert alpha is None  # declared: no fixed units for Krippendorff's alpha
    assert stored.method == "object_clusters" and len(stored.labels) == len(images)


def test_the_page_hides_gold_and_refuses_bad_lists_keeping_them(
    tmp_path, live_server, market, requester_sessions
) -> None:
    _, truth, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "objects", hits=1, name="objects-bad"
    )
    worker, params = accept_framed(live_server.url, hit_ids[0], "objects-bad")
    page = worker.http.get(live_server.url + "/tasks/hit", params=params, timeout=30)
    html = BeautifulSoup(page.text, "html.parser")
    form = html.find("form", id="task-form")
    assert isinstance(form, Tag)
    data = hidden_fields(form)
    gold = _rows(tmp_path, "gold.jsonl")
    seeds = [json.loads(v) for k, v in data.items() if k.startswith("objects-")]
    assert len(seeds) == 3  # two items and a gold picture, all alike: seeds only
    assert any(s == g["item"]["objects"] for s in seeds for g in gold)
    for key_object in (o for g in gold for o in g["answer"]["objects"]):
        # The key's exact boxes are never on the page (seeded ones are a few pixels off or split).
        assert json.dumps(key_object["box"]) not in page.text.replace(" ", "")
    assert "gold" not in page.text.lower() and '"answer"' not in page.text

    bad = {**data, "objects-0": json.dumps([{"label": "", "box": [0, 0, 500, 10], "description": "x"}])}
    refused = worker.http.post(live_server.url + "/tasks/submit", data=bad, timeout=30)
    assert refused.status_code == 422
    text = BeautifulSoup(refused.text, "html.parser")
    summary = text.find(id="error-summary")
    assert summary is not None
    assert (
        "Picture 1: Object 1: the label is empty; say what the object is; the description is too short"
        in (summary.get_text())
    )
    kept = text.find("input", attrs={"name": "objects-0"})
    assert isinstance(kept, Tag) and json.loads(str(kept["value"])) == json.loads(bad["objects-0"])
    # Garbage in the field: a clear error, the seeds shown again, never a 5xx.
    for junk in ("{", "null", '[{"label": "a", "box": "big"}]', "[" * 5000, "\u0000"):
        answer = worker.http.post(
            live_server.url + "/tasks/submit", data={**data, "objects-0": junk}, timeout=30
        )
        assert answer.status_code in (400, 422), (junk[:20], answer.status_code)
    assert csrf_of(page)
    assert truth  # the crowd's truth stays in the test; the page had only seeds
