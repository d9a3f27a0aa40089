"""Signals catch what gold misses: a copycat who answers the same everywhere is flagged, an honest one not."""

from __future__ import annotations

from sqlalchemy import select

from hits.campaigns.models import WorkerStats
from hits.crowd import PROFILES, Profile
from hits.db import session_scope
from hits.quality.live_signals import collect_signals, collect_signals_many
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review

#: At 0.999 confidence six gold answers can neither clear nor condemn anyone (0 of 6 gives
#: P(accuracy < 0.6) = 0.998; at 0.99 a copycat who missed every gold item was flagged on gold).
UNDECIDED = {"accuracy_threshold": 0.6, "confidence": 0.999, "min_gold": 2, "flagged_action": "hold"}


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
