"""The worker model through the real pipeline (issue 28): agreement catches a worker gold lets through,
and clears one gold alone would reject."""

from __future__ import annotations

import json

from sqlalchemy import select

from demo.crowd import Profile
from hits.db import session_scope
from hits.requester.quality import outbox, pipeline
from hits.requester.tables.campaigns import PublishedHIT, Submission, WorkerStats
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review

HITS = 10
#: No ``worker_model:``: the model is the default (gold alone would reject the unlucky worker here).
MODEL = {"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 4}


def _launch(tmp_path, market, requester_sessions, live_server, name: str, assignments: int):  # type: ignore[no-untyped-def]
    """The campaign both tests run (10 HITs, one gold item each, plan seed 7): its id, truth and gold keys."""
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=HITS,
        name=name,
        quality=MODEL,
        gold_per_hit=1,
        assignments_per_hit=assignments,
        seed=7,
    )
    gold_keys = sorted(
        f"{row['item']['image']}|{row['item']['sentence']}"
        for row in map(json.loads, (tmp_path / "gold.jsonl").read_text().splitlines())
    )
    return campaign_id, truth, gold_keys


def _neighbour(rating: int) -> int:
    return rating + 1 if rating < 4 else 3


def test_agreement_catches_a_lucky_random_worker_and_spares_an_unlucky_diligent_one(
    tmp_path, live_server, market, requester_sessions
) -> None:
    name = "model-1"
    campaign_id, truth, gold_keys = _launch(tmp_path, market, requester_sessions, live_server, name, 4)
    assert len(gold_keys) == HITS
    # Lucky: every ordinary item wrong (against two perfect workers), 6 of 10 gold right: gold
    # alone is undecided (P(accuracy < 0.6) = 0.47). Unlucky: every item right, 3 of 10 gold:
    # gold alone flags and rejects (P = 0.94).
    lucky = {
        k: (v if k in gold_keys[:6] else _neighbour(v)) for k, v in truth.items() if k not in gold_keys[6:]
    }
    lucky.update({k: _neighbour(truth[k]) for k in gold_keys[6:]})
    unlucky = {k: (v if k not in gold_keys[3:] else _neighbour(v)) for k, v in truth.items()}
    perfect = Profile("perfect", 1.0)
    bots = [campaign_bot(live_server.url, f"{name}-right-{n}", perfect, truth, name) for n in range(2)]
    bots.append(campaign_bot(live_server.url, f"{name}-lucky", perfect, lucky, name))
    bots.append(campaign_bot(live_server.url, f"{name}-unlucky", perfect, unlucky, name))
    for bot in bots:
        assert bot.run(max_hits=HITS).submitted == HITS
    review(requester_sessions, market)
    lucky_id, unlucky_id = bots[2].result.worker_id, bots[3].result.worker_id
    with session_scope(requester_sessions) as session:
        stats = {
            s.worker_id: s
            for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
        }
        decisions: dict[str, list[str | None]] = {}
        for worker, decision in session.execute(
            select(Submission.worker_id, Submission.decision)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id)
        ):
            decisions.setdefault(worker, []).append(decision)
        assert (stats[lucky_id].gold_correct, stats[lucky_id].gold_total) == (6, 10)
        assert (stats[unlucky_id].gold_correct, stats[unlucky_id].gold_total) == (3, 10)
        # The lucky random worker: rejected on the model, the reason in words.
        assert stats[lucky_id].flagged
        reason = stats[lucky_id].flag_reason or ""
        assert reason.startswith("agreement with others on 20 items implies"), reason
        assert "sure below 60%" in reason and "gold 6/10" in reason
        assert decisions[lucky_id] == ["reject"] * HITS
        evidence = session.scalars(
            select(Submission.evidence).where(Submission.worker_id == lucky_id)
        ).first()
        assert evidence is not None and evidence["reason"].startswith("agreement with others")
        # The unlucky diligent worker: not flagged, nothing rejected.
        assert not stats[unlucky_id].flagged, stats[unlucky_id].flag_reason
        assert "reject" not in decisions[unlucky_id]
        for bot in bots[:2]:
            assert not stats[bot.result.worker_id].flagged


def test_a_worker_undecided_when_their_work_synced_is_judged_again_when_the_campaign_finishes(
    tmp_path, live_server, market, requester_sessions
) -> None:
    """The model's verdict rests on the others' answers too: the lucky random worker works first,
    is judged with no one to agree with (undecided: gold 6/10), and is rejected at the end,
    when the others' answers are in, instead of being held for a person as 'not enough evidence'."""
    name = "model-2"
    campaign_id, truth, gold_keys = _launch(tmp_path, market, requester_sessions, live_server, name, 3)
    lucky_answers = {k: (v if k in gold_keys[:6] else _neighbour(v)) for k, v in truth.items()}
    perfect = Profile("perfect", 1.0)
    lucky = campaign_bot(live_server.url, f"{name}-lucky", perfect, lucky_answers, name)
    assert lucky.run(max_hits=HITS).submitted == HITS
    review(requester_sessions, market)

    def lucky_decisions() -> list[str | None]:
        with session_scope(requester_sessions) as session:
            return list(
                session.scalars(
                    select(Submission.decision).where(Submission.worker_id == lucky.result.worker_id)
                )
            )

    assert lucky_decisions() == [None] * HITS  # no one to agree with yet: undecided
    others = [campaign_bot(live_server.url, f"{name}-right-{n}", perfect, truth, name) for n in range(2)]
    for bot in others:
        assert bot.run(max_hits=HITS).submitted == HITS
    review(requester_sessions, market)  # the others' work: the lucky worker is not in these batches
    assert lucky_decisions() == [None] * HITS
    with session_scope(requester_sessions) as session:
        finished = pipeline.finish_campaigns(session, market.access_key_id)
    assert finished.campaigns == [campaign_id] and len(finished.outbox) >= HITS
    for entry_id in finished.outbox:
        outbox.apply_entry(requester_sessions, market, entry_id)
    assert lucky_decisions() == ["reject"] * HITS
    with session_scope(requester_sessions) as session:
        record = session.scalar(
            select(WorkerStats).where(
                WorkerStats.campaign_id == campaign_id, WorkerStats.worker_id == lucky.result.worker_id
            )
        )
        assert record is not None and record.flagged
        assert (record.flag_reason or "").startswith("agreement with others on 20 items implies")
        for bot in others:
            theirs = select(Submission.decision).where(Submission.worker_id == bot.result.worker_id)
            assert set(session.scalars(theirs)) == {"approve"}
