"""Gold per HIT: every assignment of a HIT sees the planned gold, HITs share none while the pool lasts."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.pages.gold import choose_gold, page_slots, pool_shortfall
from hits.requester.tables.campaigns import GoldExposure, GoldItem, PublishedHIT
from tests.helpers import launch_template_campaign


def test_every_assignment_of_a_hit_sees_its_planned_gold_and_no_two_hits_share_one(
    tmp_path, live_server, market, requester_sessions
) -> None:
    # Four gold items, two gold slots a HIT, two HITs: the pool covers every gold slot once.
    campaign_id, _, _ = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rating", hits=2, name="per-hit-pool"
    )
    with session_scope(requester_sessions) as session:
        hits = list(
            session.scalars(
                select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id).order_by(PublishedHIT.id)
            )
        )
        planned = [{s.position: s.gold_item_id for s in h.slots if s.gold_item_id} for h in hits]
        assert all(len(p) == 2 for p in planned)
        # A worker who takes both HITs meets four different gold items.
        assert not set(planned[0].values()) & set(planned[1].values())
        shown = {
            (hit_index, worker): {
                p: g.id
                for p, g in choose_gold(session, hits[hit_index], f"A{hit_index}{worker}", worker).items()
            }
            for hit_index in (0, 1)
            for worker in ("WORKER-1", "WORKER-2")
        }
        for (hit_index, _), gold in shown.items():
            assert gold == planned[hit_index]  # the same for every worker: nothing to compare
        exposed = session.scalars(
            select(GoldExposure.worker_id).where(GoldExposure.campaign_id == campaign_id)
        ).all()
        assert sorted(exposed) == ["WORKER-1"] * 4 + ["WORKER-2"] * 4
    with session_scope(requester_sessions) as session:
        hit = session.get(PublishedHIT, hits[0].id)
        assert hit is not None
        # A reload records nothing more and shows the same page, which is the preview's.
        choose_gold(session, hit, "A0WORKER-1", "WORKER-1")
        assert (
            len(session.scalars(select(GoldExposure).where(GoldExposure.assignment_id == "A0WORKER-1")).all())
            == 2
        )
        page = [
            (s.position, s.payload, s.gold.id if s.gold else None)
            for s in page_slots(session, hit, "A0WORKER-1")
        ]
        preview = [
            (s.position, s.payload, s.gold.id if s.gold else None) for s in page_slots(session, hit, None)
        ]
        assert page == preview


def test_an_assignment_shown_other_gold_before_keeps_it(
    tmp_path, live_server, market, requester_sessions
) -> None:
    # Pages opened before gold was fixed per HIT recorded their own choice: it stays what they show and grade.
    campaign_id, _, _ = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rating", hits=2, name="kept-choice"
    )
    with session_scope(requester_sessions) as session:
        first, second = session.scalars(
            select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id).order_by(PublishedHIT.id)
        ).all()
        positions = [s.position for s in first.slots if s.gold_item_id]
        others = [s.gold_item_id for s in second.slots if s.gold_item_id]
        for position, gold_id in zip(positions, others, strict=True):
            session.add(
                GoldExposure(
                    campaign_id=campaign_id,
                    worker_id="EARLY",
                    assignment_id="EARLY-ASSIGNMENT",
                    position=position,
                    gold_item_id=gold_id,
                )
            )
        session.flush()
        kept = choose_gold(session, first, "EARLY-ASSIGNMENT", "EARLY")
        assert sorted(g.id for g in kept.values()) == sorted(others)
        shown = {s.position: s.gold.id for s in page_slots(session, first, "EARLY-ASSIGNMENT") if s.gold}
        assert shown == dict(zip(positions, others, strict=True))
        assert session.get(GoldItem, others[0]) is not None


def test_pool_shortfall_names_the_numbers() -> None:
    assert pool_shortfall(gold_count=20, gold_per_hit=2, hits=10) is None
    problem = pool_shortfall(gold_count=5, gold_per_hit=2, hits=10)
    assert (
        problem is not None
        and "2 x 10 = 20 gold slots" in problem
        and "add at least 15 gold items" in problem
    )
    assert pool_shortfall(gold_count=0, gold_per_hit=0, hits=10) is None


def _short_pool_campaign(tmp_path, extra: str = ""):  # type: ignore[no-untyped-def]
    """4 items, 2 a HIT, 1 gold slot each, 1 gold item: the gold item would be in both HITs."""
    from tests.campaigns.test_campaign_file import GOOD, write

    gold = [
        '{"id": "g1", "item": {"image": "https://img/g.png", "sentence": "A cat."}, "answer": {"rating": 4}}'
    ]
    return write(tmp_path, GOOD + extra, gold=gold)


def test_a_small_gold_pool_is_refused_naming_file_field_and_numbers(tmp_path) -> None:
    from hits.requester.fileerrors import InputFileError
    from hits.requester.files.campaign import load_campaign_file

    with pytest.raises(InputFileError) as caught:
        load_campaign_file(_short_pool_campaign(tmp_path))
    error = caught.value
    assert (error.line, error.field) == (9, "gold_per_hit")
    assert "has 1 items but a worker who takes all 2 HITs meets 1 x 2 = 2 gold slots" in error.message
    # gold_per_hit is a key of the campaign file, not of the gold file (issue 25).
    assert "(gold items go in gold.jsonl; gold_per_hit is a key of campaign.yaml)" in error.message
    assert "set allow_gold_reuse: true in campaign.yaml" in error.message


def test_hitforge_launch_refuses_a_small_gold_pool_and_publishes_nothing(
    tmp_path, settings, requester_sessions
) -> None:
    from click.testing import CliRunner

    from hits.requester.tables.campaigns import Campaign
    from server.cli.main import main

    path = _short_pool_campaign(tmp_path)
    env = {"HITFORGE_DATABASE_URL": settings.database_url, "HITFORGE_VAR_DIR": str(settings.var_dir)}
    result = CliRunner().invoke(main, ["launch", str(path)], env=env)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "field 'gold_per_hit'" in said and "meets 1 x 2 = 2 gold slots" in said, said
    with session_scope(requester_sessions) as session:
        assert session.scalar(select(Campaign).where(Campaign.name == "test-campaign")) is None


def test_allow_gold_reuse_lets_it_through_with_a_warning(tmp_path) -> None:
    from hits.requester.campaigns.service import campaign_warnings
    from hits.requester.files.campaign import load_campaign_file

    loaded = load_campaign_file(_short_pool_campaign(tmp_path, "allow_gold_reuse: true\n"))
    assert loaded.spec.allow_gold_reuse
    assert campaign_warnings(loaded) == [
        "the gold pool has 1 items but a worker who takes all 2 HITs meets 1 x 2 = 2 gold slots, so gold "
        "items would recur across HITs while ordinary items never do, telling such a worker which items "
        "are gold; add at least 1 gold items or lower gold_per_hit (allowed by allow_gold_reuse)"
    ]


def test_a_campaign_stored_before_allow_gold_reuse_existed_is_resumed_without_a_changed_field(
    tmp_path,
) -> None:
    from hits.requester.campaigns.service import changed_fields
    from hits.requester.files.campaign import load_campaign_file
    from hits.requester.tables.campaigns import Campaign
    from tests.campaigns.test_campaign_file import write

    spec = load_campaign_file(write(tmp_path)).spec
    stored = {k: v for k, v in spec.model_dump(mode="json").items() if k != "allow_gold_reuse"}
    assert changed_fields(Campaign(spec=stored), spec) == []
    assert changed_fields(Campaign(spec=stored), spec.model_copy(update={"allow_gold_reuse": True})) == [
        "allow_gold_reuse"
    ]
