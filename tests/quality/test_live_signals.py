"""Signals catch what gold misses: a copycat who answers the same everywhere is flagged, an honest one not."""

from __future__ import annotations

from sqlalchemy import select

from demo.crowd import PROFILES, Profile
from hits.db import session_scope
from hits.requester.quality.live_signals import collect_signals, collect_signals_many
from hits.requester.tables.campaigns import WorkerStats
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review

#: At 0.999 confidence six gold answers can neither clear nor condemn anyone (0 of 6 gives
#: P(accuracy < 0.6) = 0.998; at 0.99 a copycat who missed every gold item was flagged on gold).
#: The gold-only rule (worker_model: false): the signals flag whom gold leaves undecided.
UNDECIDED = {
    "accuracy_threshold": 0.6,
    "confidence": 0.999,
    "min_gold": 2,
    "flagged_action": "hold",
    "worker_model": False,
}


def _copycat_and_honest(tmp_path, live_server, market, requester_sessions, name: str):  # type: ignore[no-untyped-def]
    """A campaign worked by a copycat and an honest worker, reviewed once: (campaign id, copycat, honest)."""
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=3,
        name=name,
        quality=UNDECIDED,
        gold_per_hit=2,
    )
    copycat = campaign_bot(live_server.url, f"{name}-copycat", PROFILES["copycat"], truth, name)
    honest = campaign_bot(live_server.url, f"{name}-honest", Profile("perfect", 1.0), truth, name)
    assert copycat.run(max_hits=3).submitted == 3
    assert honest.run(max_hits=3).submitted == 3
    review(requester_sessions, market)
    return campaign_id, copycat.result.worker_id, honest.result.worker_id


def test_a_copycat_is_flagged_on_straight_lining_while_gold_is_undecided(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, copycat, honest = _copycat_and_honest(
        tmp_path, live_server, market, requester_sessions, "signals-1"
    )
    with session_scope(requester_sessions) as session:
        stats = {
            s.worker_id: s
            for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
        }
        flagged = stats[copycat]
        assert flagged.flagged and "suspicious signals: straightline" in (flagged.flag_reason or "")
        assert flagged.gold_total == 6
        assert not stats[honest].flagged


def test_signals_for_a_batch_of_workers_match_those_read_one_by_one(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, copycat, honest = _copycat_and_honest(
        tmp_path, live_server, market, requester_sessions, "signals-2"
    )
    workers = [copycat, honest]
    with session_scope(requester_sessions) as session:
        together = collect_signals_many(session, campaign_id, workers)
        assert together == {w: collect_signals(session, campaign_id, w) for w in workers}
        assert together[copycat]["suspicious"] == ["straightline"]
        assert together[honest]["suspicious"] == []
        assert together[honest]["speed"]["value"] is not None


def test_a_worker_who_never_sides_with_the_others_is_held_on_agreement_while_gold_is_undecided(
    tmp_path, live_server, market, requester_sessions
) -> None:
    # Three workers a HIT: two who are always right, one who always gives a neighbouring rating.
    # For the latter the other two always agree, so each of their ten ratings is compared, and
    # none agrees: P(agreement < 0.5) = 1 - 0.5**11 reaches even the campaign's 0.999, while
    # 0 right of 5 gold answers does not (0.996). The right ones are never compared: the others
    # split one against one on every item.
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=5,
        name="signals-3",
        quality=UNDECIDED,
        assignments_per_hit=3,
    )
    wrong = campaign_bot(live_server.url, "signals-3-wrong", Profile("wrong", 0.0), truth, "signals-3")
    right = [
        campaign_bot(live_server.url, f"signals-3-right-{n}", Profile("perfect", 1.0), truth, "signals-3")
        for n in range(2)
    ]
    for bot in (*right, wrong):
        assert bot.run(max_hits=5).submitted == 5
    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        stats = {
            s.worker_id: s
            for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
        }
        flagged = stats[wrong.result.worker_id]
        assert flagged.gold_total == 5 and flagged.gold_correct == 0
        assert flagged.flagged and "suspicious signals: agreement" in (flagged.flag_reason or "")
        assert not any(stats[bot.result.worker_id].flagged for bot in right)
        evidence = collect_signals(session, campaign_id, wrong.result.worker_id, confidence=0.999)
        agreement = evidence["agreement"]
        assert (agreement["majority_compared"], agreement["majority_agreement"]) == (10, 0.0)
        assert agreement["p_majority_agreement_below"] == round(1 - 0.5**11, 4)
        assert "dawid_skene_accuracy" not in agreement  # nobody has 30 labels: no fit
        for bot in right:
            mine = collect_signals(session, campaign_id, bot.result.worker_id, confidence=0.999)
            assert mine["agreement"]["majority_compared"] == 0 and mine["suspicious"] == []
