"""A gold item whose scoring raises on a worker's answer costs that worker the item; it does not
stop the sync batch (the batch is one transaction: retried, it would fail again, and the
marketplace would auto-approve everything in it unjudged)."""

from __future__ import annotations

import logging

from sqlalchemy import select

from demo.crowd import PROFILES
from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.templates import get_template
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review


def test_an_answer_whose_scoring_raises_is_counted_wrong_and_the_batch_goes_on(
    tmp_path, live_server, market, requester_sessions, monkeypatch, caplog
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name="scorefail", gold_per_hit=1
    )
    bots = [
        campaign_bot(live_server.url, f"scorefail-{n}", PROFILES["diligent"], truth, "scorefail")
        for n in (1, 2)
    ]
    for bot in bots:
        assert bot.run(max_hits=2).submitted == 2, bot.result.errors
    template_class = type(get_template("rating"))
    real = template_class.score_gold_item
    raised: list[object] = []

    def flaky_score(self, answer, key, item, options):  # type: ignore[no-untyped-def]
        # Fault injection standing in for an answer a template's scoring cannot take: the
        # first gold answer graded (the first submission's, by id) raises.
        if not raised:
            raised.append(answer)
            raise OverflowError("int too large to convert to float")
        return real(self, answer, key, item, options)

    monkeypatch.setattr(template_class, "score_gold_item", flaky_score)
    with caplog.at_level(logging.WARNING, logger="hits.requester.quality.review"):
        review(requester_sessions, market)
    assert raised, "the fault was never injected"
    with session_scope(requester_sessions) as session:
        work = session.scalars(
            select(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id)
            .order_by(Submission.id)
        ).all()
        # Every submission of the batch was graded, the one after the failure included.
        assert len(work) == 4 and all(s.graded for s in work)
        # One gold item a HIT: the first submission's only gold item counts wrong.
        assert (work[0].gold_correct, work[0].gold_total) == (0, 1)
        assert all(s.gold_total == 1 for s in work)
    assert "could not be scored; counted wrong" in caplog.text
