"""The simulated crowd works through the real worker site; what it sends is stored as MTurk stores it."""

from __future__ import annotations

import random

import xmlschema
from sqlalchemy import select

from demo.crowd import PROFILES, Bot
from demo.tasks.rating import rate
from hits.db import session_scope
from hits.requester.tables.campaigns import GoldItem, PublishedHIT, Submission
from hits.wire.documents import xml_to_answers
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.server.test_worker_site import accept


def test_a_diligent_bot_completes_hits_and_answers_are_stored_once(
    tmp_path, live_server, market, requester_sessions, schemas_dir
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name="bots-1"
    )
    bot = campaign_bot(live_server.url, "bot-diligent-1", PROFILES["diligent"], truth, "bots-1", seed=1)
    result = bot.run(max_hits=5)
    assert result.errors == []
    assert result.submitted == 2  # one assignment per HIT per worker
    with session_scope(requester_sessions) as session:
        published = session.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)).all()
        subs = session.scalars(
            select(Submission).where(Submission.published_hit_id.in_([p.id for p in published]))
        ).all()
    assert len(subs) == 2
    assert {s.worker_id for s in subs} == {result.worker_id}
    schema = xmlschema.XMLSchema(schemas_dir / "QuestionFormAnswers-2005-10-01.xsd")
    for p in published:
        assignments = list(market.assignments_for_hit(p.mturk_hit_id, ["Submitted"]))
        assert len(assignments) == 1
        answer_xml = assignments[0]["Answer"]
        schema.validate(answer_xml)
        fields = xml_to_answers(answer_xml)
        assert set(fields) == {f"rating-{i}" for i in range(len(p.slots))}
        assert all(v in {"1", "2", "3", "4"} for v in fields.values())


def test_spammers_answer_at_random_and_each_slot_is_taken_once(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="bots-2"
    )
    with session_scope(requester_sessions) as session:
        hit_id = session.scalar(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        )
    bots = [campaign_bot(live_server.url, f"bot-{n}", PROFILES["spammer"], truth, "bots-2") for n in "abc"]
    for bot in bots:
        bot.run(max_hits=10)
    workers = [a["WorkerId"] for a in market.assignments_for_hit(hit_id, ["Submitted"])]
    assert len(workers) == 2 == len(set(workers))  # MaxAssignments=2, never one worker twice
    assert set(workers) <= {b.result.worker_id for b in bots}
    rng = random.Random(3)
    answers = {rate(truth, next(iter(truth)), PROFILES["spammer"], rng) for _ in range(200)}
    assert answers == {1, 2, 3, 4}


def test_gold_answers_never_reach_the_page(tmp_path, live_server, market, requester_sessions) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="bots-3"
    )
    bot = Bot(live_server.url, "bot-leak", PROFILES["diligent"], truth)
    bot.sign_in()
    listing = bot.http.get(live_server.url + "/").text
    with session_scope(requester_sessions) as session:
        published = session.scalar(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id))
        assert published is not None
        gold = session.scalars(select(GoldItem).where(GoldItem.campaign_id == campaign_id)).all()
        hit_id = published.mturk_hit_id
    _, src = accept(bot, live_server.url, hit_id)
    page = bot.http.get(src).text
    assert "gold" not in page.lower() and "gold" not in listing.lower()
    for g in gold:
        assert g.external_id not in page
        assert '"rating"' not in page
    # Gold and ordinary slots are rendered with identical markup.
    assert page.count('class="pair"') == 3
