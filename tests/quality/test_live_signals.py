"""Signals catch what gold misses: a copycat who answers the same everywhere is flagged, an honest one not."""

from __future__ import annotations

from sqlalchemy import select

from hits.campaigns.models import WorkerStats
from hits.crowd import PROFILES, Profile
from hits.db import session_scope
from hits.quality.live_signals import collect_signals, collect_signals_many
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review


def test_a_copycat_is_flagged_on_straight_lining_while_gold_is_undecided(
    tmp_path, live_server, market, requester_sessions
) -> None:
    # At 0.99 confidence four gold answers can neither clear nor condemn anyone.
    quality = {"accuracy_threshold": 0.6, "confidence": 0.99, "min_gold": 2, "flagged_action": "hold"}
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=3,
        name="signals-1",
        quality=quality,
        gold_per_hit=2,
    )
    copycat = campaign_bot(live_server.url, "signals-copycat", PROFILES["copycat"], truth, "signals-1")
    honest = campaign_bot(live_server.url, "signals-honest", Profile("perfect", 1.0), truth, "signals-1")
    assert copycat.run(max_hits=3).submitted == 3
    assert honest.run(max_hits=3).submitted == 3
    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        stats = {
            s.worker_id: s
            for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
        }
        flagged = stats[copycat.result.worker_id]
        assert flagged.flagged and "suspicious signals: straightline" in (flagged.flag_reason or "")
        assert flagged.gold_total == 6
        assert not stats[honest.result.worker_id].flagged


def test_signals_for_a_batch_of_workers_match_those_read_one_by_one(
    tmp_path, live_server, market, requester_sessions
) -> None:
    quality = {"accuracy_threshold": 0.6, "confidence": 0.99, "min_gold": 2, "flagged_action": "hold"}
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=3,
        name="signals-2",
        quality=quality,
        gold_per_hit=2,
    )
    copycat = campaign_bot(live_server.url, "signals2-copycat", PROFILES["copycat"], truth, "signals-2")
    honest = campaign_bot(live_server.url, "signals2-honest", Profile("perfect", 1.0), truth, "signals-2")
    assert copycat.run(max_hits=3).submitted == 3
    assert honest.run(max_hits=3).submitted == 3
    review(requester_sessions, market)
    workers = [copycat.result.worker_id, honest.result.worker_id]
    with session_scope(requester_sessions) as session:
        together = collect_signals_many(session, campaign_id, workers)
        assert together == {w: collect_signals(session, campaign_id, w) for w in workers}
        assert together[copycat.result.worker_id]["suspicious"] == ["straightline"]
        assert together[honest.result.worker_id]["suspicious"] == []
        assert together[honest.result.worker_id]["speed"]["value"] is not None
