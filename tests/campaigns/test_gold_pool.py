"""Gold per worker: no item twice while unseen ones remain, stable on reload, graded as shown."""

from __future__ import annotations

from sqlalchemy import select

from hits.campaigns.gold import choose_gold, page_slots, pool_warning
from hits.campaigns.models import PublishedHIT
from hits.db import session_scope
from tests.helpers import launch_template_campaign


def test_a_worker_meets_every_gold_item_before_any_repeats(
    tmp_path, live_server, market, requester_sessions
) -> None:
    # Four gold items, two gold slots a HIT: the plan repeats HIT 1's gold on HIT 3.
    campaign_id, _, _ = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rating", hits=4, name="per-worker-pool"
    )
    with session_scope(requester_sessions) as session:
        hits = list(
            session.scalars(
                select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id).order_by(PublishedHIT.id)
            )
        )
        planned = [{s.gold_item_id for s in h.slots if s.gold_item_id} for h in hits]
        assert planned[0] == planned[2]  # what a worker would see twice without per-worker choice
        first = choose_gold(session, hits[0], "ASSIGN-1", "WORKER-1")
        third = choose_gold(session, hits[2], "ASSIGN-3", "WORKER-1")
        seen = [g.id for g in (*first.values(), *third.values())]
        assert len(seen) == 4 == len(set(seen))
        # Another worker's choices are independent of the first worker's.
        other = choose_gold(session, hits[2], "ASSIGN-9", "WORKER-2")
        assert len(other) == 2
        # Once all are seen, repeats are the least seen ones, never a duplicate on one page.
        again = choose_gold(session, hits[1], "ASSIGN-2", "WORKER-1")
        assert len({g.id for g in again.values()}) == 2
    with session_scope(requester_sessions) as session:
        hit = session.get(PublishedHIT, hits[0].id)
        assert hit is not None
        # A reload shows the same gold; the page's gold positions carry the chosen items.
        assert {p: g.id for p, g in choose_gold(session, hit, "ASSIGN-1", "WORKER-1").items()} == {
            p: g.id for p, g in first.items()
        }
        shown = {s.position: s.gold.id for s in page_slots(session, hit, "ASSIGN-1") if s.gold}
        assert shown == {p: g.id for p, g in first.items()}
        # Without a choice on record (a preview), the plan stands.
        plan = {s.position: s.gold.id for s in page_slots(session, hit, None) if s.gold}
        assert set(plan.values()) == planned[0]


def test_pool_warning_names_the_shortfall() -> None:
    assert pool_warning(gold_count=20, gold_per_hit=2, hits=10) is None
    warning = pool_warning(gold_count=5, gold_per_hit=2, hits=10)
    assert warning is not None and "add at least 15 gold items" in warning
    assert pool_warning(gold_count=0, gold_per_hit=0, hits=10) is None


def test_a_small_gold_pool_is_reported_when_the_campaign_is_read(tmp_path) -> None:
    from hits.campaigns.service import campaign_warnings
    from hits.campaigns.spec import load_campaign_file
    from tests.campaigns.test_campaign_file import write

    loaded = load_campaign_file(write(tmp_path))  # 4 items, 2 a HIT, 1 gold slot each, 1 gold item
    assert campaign_warnings(loaded) == [
        "the gold pool has 1 items but a worker who takes all 2 HITs meets 2 gold slots: they will "
        "see some gold items again; add at least 1 gold items or lower gold_per_hit"
    ]
