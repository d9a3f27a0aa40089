"""Adaptive gold (issue 28): more gold on the HITs anyone may take, less on those only trusted workers may.

From the outside: the plan moves gold between pages of one size without adding
any; the trusted HITs carry a requirement the marketplace enforces (boto3 sees
it, a newcomer's listing never shows them); the pipeline grants trust once the
rule is confident a worker is good, and a worker it flags loses it.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from demo.crowd import Profile
from demo.data import write_rating_demo
from hits.db import session_scope
from hits.requester.campaigns.check import check_campaign_file, plan_lines
from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.files.adaptive_gold import AdaptiveGold
from hits.requester.files.campaign import QualityPolicy, load_campaign_file
from hits.requester.pages.gold import page_plans
from hits.requester.quality import outbox
from hits.requester.quality.policy import WorkerVerdict
from hits.requester.quality.trust import open_trusted_hits, queue_trust_changes, trust_change
from hits.requester.quality.worker_profile import worker_profile
from hits.requester.tables.campaigns import (
    Campaign,
    GoldExposure,
    HITSlot,
    OutboxEntry,
    PublishedHIT,
    WorkerStats,
)
from tests.helpers import campaign_bot, publish_campaign_file, rating_campaign_spec
from tests.quality.test_followups import review
from tests.server.test_dashboard import staff_session

ADAPTIVE = {"newcomers": 3, "trusted": 1, "trust_after_gold": 4}


@given(
    items=st.integers(1, 400),
    items_per_hit=st.integers(1, 8),
    gold_per_hit=st.integers(1, 4),
    data=st.data(),
)
def test_the_plan_moves_gold_between_pages_of_one_size_and_never_adds_any(
    items: int, items_per_hit: int, gold_per_hit: int, data: st.DataObject
) -> None:
    trusted = data.draw(st.integers(0, gold_per_hit - 1))
    newcomers = (
        data.draw(st.integers(gold_per_hit + 1, items_per_hit + gold_per_hit - 1))
        if items_per_hit > 1
        else None
    )
    if newcomers is None:
        return
    plans = page_plans(items, items_per_hit, gold_per_hit, (newcomers, trusted))
    plain = page_plans(items, items_per_hit, gold_per_hit)
    assert sum(p.items for p in plans) == items
    page = items_per_hit + gold_per_hit
    # Every page but the last is full, so pages look alike; each is one tier or the other.
    assert all(p.items + p.gold == page for p in plans[:-1])
    assert all(p.gold == (trusted if p.for_trusted else newcomers) for p in plans)
    # The gold placed never runs ahead of gold_per_hit a HIT, and the campaign shows no more of it.
    for n in range(1, len(plans) + 1):
        assert sum(p.gold for p in plans[:n]) <= gold_per_hit * n
    assert sum(p.gold for p in plans) <= sum(p.gold for p in plain)
    assert len(plans) <= len(plain) + 1


def test_without_adaptive_gold_the_plan_is_the_plain_one() -> None:
    assert [(p.items, p.gold, p.for_trusted) for p in page_plans(10, 4, 2)] == [
        (4, 2, False),
        (4, 2, False),
        (2, 2, False),
    ]


def _campaign_file(folder: Path, **overrides: object) -> Path:
    write_rating_demo(folder, items=8, gold=16, seed=3)
    spec = rating_campaign_spec("adaptive", gold_per_hit=2, **{"adaptive_gold": ADAPTIVE, **overrides})
    path = folder / "campaign.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("adaptive", "says"),
    [
        ({"newcomers": 3, "trusted": 2}, "trusted < gold_per_hit < newcomers"),
        ({"newcomers": 2, "trusted": 1}, "trusted < gold_per_hit < newcomers"),
        ({"newcomers": 4, "trusted": 1}, "would leave no ordinary item"),
        ({"newcomers": 3, "trusted": 1, "trust_after": 4}, "trust_after"),
    ],
)
def test_a_careless_adaptive_gold_is_refused_with_file_line_and_field(
    tmp_path: Path, adaptive: dict[str, int], says: str
) -> None:
    path = _campaign_file(tmp_path, adaptive_gold=adaptive)
    with pytest.raises((InputFileError, InputFileErrors)) as caught:
        load_campaign_file(path)
    text = str(caught.value)
    assert "campaign.yaml" in text and "adaptive_gold" in text and says in text, text
    assert "line" in text


def test_campaign_check_says_how_the_hits_split(tmp_path: Path) -> None:
    checked = check_campaign_file(_campaign_file(tmp_path))
    assert checked.plan.hits == 4
    text = "\n".join(plan_lines(checked.plan))
    assert "2 HITs for anyone with 3 gold of 4 slots, 2 for trusted workers with 1" in text, text


def _verdict(verdict: str, p_below: float) -> WorkerVerdict:
    return WorkerVerdict(verdict, p_below, {})  # type: ignore[arg-type]


def test_trust_is_granted_only_on_a_confident_approval_after_enough_gold() -> None:
    adaptive = AdaptiveGold.model_validate(ADAPTIVE)
    policy = QualityPolicy(confidence=0.9)
    record = WorkerStats(campaign_id=1, worker_id="W", gold_correct=4, gold_total=4, flagged=False)
    assert trust_change(_verdict("approve", 0.05), record, adaptive, policy) == "grant"
    assert trust_change(_verdict("approve", 0.2), record, adaptive, policy) is None
    assert trust_change(_verdict("undecided", 0.0), record, adaptive, policy) is None
    record.gold_total = 3
    assert trust_change(_verdict("approve", 0.0), record, adaptive, policy) is None
    assert trust_change(_verdict("flag", 0.99), record, adaptive, policy) == "revoke"


def test_trust_is_queued_once_revoked_once_and_never_given_back(requester_sessions) -> None:
    adaptive = AdaptiveGold.model_validate(ADAPTIVE)
    policy = QualityPolicy(confidence=0.9)
    with session_scope(requester_sessions) as session:
        campaign = Campaign(
            name="trust-once", template="rating", spec={}, budget=Decimal(1), trust_qualification_type_id="Q1"
        )
        session.add(campaign)
        session.flush()
        record = WorkerStats(
            campaign_id=campaign.id, worker_id="W1", gold_correct=9, gold_total=9, flagged=False
        )
        session.add(record)
        session.flush()

        def judge(verdict: str, p_below: float) -> list[str]:
            ids = queue_trust_changes(
                session, campaign, adaptive, policy, {"W1": (_verdict(verdict, p_below), record)}
            )
            return [str(session.get(OutboxEntry, i).action) for i in ids]  # type: ignore[union-attr]

        assert judge("flag", 0.99) == []  # never trusted: nothing to take back
        record.flagged = False
        assert judge("approve", 0.01) == ["qualify"]
        assert judge("approve", 0.01) == []  # granted already
        record.flagged = True
        assert judge("flag", 0.99) == ["revoke"]
        assert judge("flag", 0.99) == []
        record.flagged = False
        assert judge("approve", 0.0) == []  # lost once: stays on the heavy HITs
        targets = session.execute(
            select(OutboxEntry.action, OutboxEntry.payload).where(OutboxEntry.campaign_id == campaign.id)
        ).all()
        assert sorted(a for a, _ in targets) == ["qualify", "revoke"]
        assert all(p["qualification_type_id"] == "Q1" and p["worker_id"] == "W1" for _, p in targets)


def published_adaptive_campaign(  # type: ignore[no-untyped-def]
    folder: Path, live_server, market, requester_sessions, name: str, **overrides: object
) -> tuple[int, dict[str, int]]:
    """A published rating campaign of 8 items with adaptive gold (3 and 1 on pages of 4 slots, so 2
    HITs for anyone and 2 for trusted workers); its id and the demo's truth."""
    truth = write_rating_demo(folder, items=8, gold=16, seed=3)
    spec = rating_campaign_spec(
        name,
        **{
            "gold_per_hit": 2,
            "budget": "20.00",
            "adaptive_gold": ADAPTIVE,
            "quality": {"accuracy_threshold": 0.6, "confidence": 0.8, "min_gold": 2},
            "auto_approval_delay_seconds": 3600,
            "seed": 5,
            **overrides,
        },
    )
    return publish_campaign_file(folder, spec, market, requester_sessions, live_server.url), truth


def _gold_shown(sessions, worker_id: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Gold items the worker's pages showed, and the assignments they were shown on."""
    with session_scope(sessions) as session:
        rows = session.execute(
            select(GoldExposure.assignment_id).where(GoldExposure.worker_id == worker_id)
        ).all()
    return len(rows), len({r[0] for r in rows})


def test_newcomers_get_the_gold_heavy_hits_and_a_trusted_worker_the_light_ones(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    name = "adaptive-live"
    campaign_id, truth = published_adaptive_campaign(tmp_path, live_server, market, requester_sessions, name)
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None and campaign.trust_qualification_type_id
        trust_id = campaign.trust_qualification_type_id
        rows = list(session.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)))
        gold_on = {r.mturk_hit_id: sum(1 for s in r.slots if s.gold_item_id is not None) for r in rows}
        trusted_hits = {r.mturk_hit_id for r in rows if r.for_trusted}
        assert session.scalar(select(HITSlot.id).limit(1)) is not None
    assert len(rows) == 4 and len(trusted_hits) == 2
    # What a boto3 user sees: two HIT types; only the light one requires trust.
    types: dict[str, set[bool]] = {}
    for hit_id in gold_on:
        hit = mturk.get_hit(HITId=hit_id)["HIT"]
        requirements = hit.get("QualificationRequirements", [])
        requires_trust = any(
            r["QualificationTypeId"] == trust_id and r["Comparator"] == "Exists" for r in requirements
        )
        assert requires_trust == (hit_id in trusted_hits)
        assert gold_on[hit_id] == (1 if hit_id in trusted_hits else 3)
        types.setdefault(hit["HITTypeId"], set()).add(hit_id in trusted_hits)
    assert len(types) == 2 and all(len(v) == 1 for v in types.values())

    perfect = Profile("perfect", 1.0)
    diligent = campaign_bot(live_server.url, f"{name}-good", perfect, truth, name)
    # A newcomer sees only the heavy HITs: two of them, then nothing left for them.
    assert diligent.run(max_hits=4).submitted == 2, diligent.result.errors
    worker_id = diligent.result.worker_id
    assert _gold_shown(requester_sessions, worker_id) == (6, 2)
    trusted_type = next(t for t, kinds in types.items() if kinds == {True})
    assert _accept_by_url(live_server.url, f"{name}-sly", trusted_type) == "refused"
    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        granted = session.scalar(
            select(OutboxEntry).where(
                OutboxEntry.campaign_id == campaign_id,
                OutboxEntry.action == "qualify",
                OutboxEntry.target.like("trust-%"),
            )
        )
        assert granted is not None and granted.payload["worker_id"] == worker_id
        assert granted.status == "done", granted.last_error
    assert market.qualification_score(trust_id, worker_id) == 1
    with session_scope(requester_sessions) as session:
        # What a reviewer reads on the worker's profile: the trust in words, not a qualification id.
        details = [a.detail for a in worker_profile(session, [campaign_id], worker_id).actions]
    assert "trusted: may take the campaign's HITs with less gold" in details, details
    # What the requester reads on the campaign's page.
    http = staff_session(live_server.url, requester_sessions)
    page = BeautifulSoup(http.get(f"{live_server.url}/dashboard/campaigns/{campaign_id}").text, "html.parser")
    said = " ".join(page.select_one("#adaptive-gold").get_text().split())  # type: ignore[union-attr]
    assert "HITs for anyone carry 3 gold items a page, HITs for trusted workers 1" in said, said
    assert "1 worker is trusted." in said, said
    # Trusted now: the light HITs are open to them, and gold per assignment comes back to 2.
    again = campaign_bot(live_server.url, f"{name}-good", perfect, truth, name)
    assert again.run(max_hits=4).submitted == 2, again.result.errors
    gold, assignments = _gold_shown(requester_sessions, worker_id)
    assert (gold, assignments) == (8, 4)
    assert Decimal(gold) / assignments == Decimal(2)


def _accept_by_url(base_url: str, username: str, hit_type_id: str) -> str:
    """A newcomer posting the accept of a group they are not shown, with a real form's fields."""
    from bs4 import BeautifulSoup

    from demo.crowd import Bot, _form_fields

    bot = Bot(base_url, username, Profile("sly", 1.0), {})
    bot.sign_in()
    form = bot._get("/").find("form", method="post")
    fields = _form_fields(form) if form is not None else {}  # type: ignore[arg-type]
    response = bot._post(f"{base_url}/groups/{hit_type_id}/accept", fields)
    page = BeautifulSoup(response.text, "html.parser")
    if page.find("iframe", id="hit-frame") is not None:
        return "accepted"
    # Refused for the requirement, not for a missing form field or a sign-in.
    assert response.status_code == 200 and "qualif" in page.get_text().lower(), page.get_text()[:2000]
    return "refused"


def test_hits_for_trusted_workers_open_to_everyone_once_nothing_else_is_left(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    name = "adaptive-open"
    campaign_id, truth = published_adaptive_campaign(
        tmp_path,
        live_server,
        market,
        requester_sessions,
        name,
        assignments_per_hit=1,
        # Nobody is trusted in this campaign: the HITs for trusted workers would wait forever.
        adaptive_gold={**ADAPTIVE, "trust_after_gold": 100},
    )
    newcomer = campaign_bot(live_server.url, f"{name}-new", Profile("perfect", 1.0), truth, name)
    assert newcomer.run(max_hits=1).submitted == 1, newcomer.result.errors
    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        assert open_trusted_hits(session, market.access_key_id) == []  # work for anyone is left
    again = campaign_bot(live_server.url, f"{name}-new", Profile("perfect", 1.0), truth, name)
    assert again.run(max_hits=4).submitted == 1, again.result.errors  # the other HIT for anyone
    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        opened = open_trusted_hits(session, market.access_key_id)
        assert len(opened) == 1
        entry = session.get(OutboxEntry, opened[0])
        assert entry is not None and len(entry.payload["hits"]) == 2
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        main_type = campaign.hit_type_id
    with session_scope(requester_sessions) as session:
        assert open_trusted_hits(session, market.access_key_id) == []  # once per campaign
    assert outbox.apply_entry(requester_sessions, market, opened[0]).startswith("retype (2 HITs")
    for hit_id in entry.payload["hits"]:
        assert mturk.get_hit(HITId=hit_id)["HIT"]["HITTypeId"] == main_type
    last = campaign_bot(live_server.url, f"{name}-new", Profile("perfect", 1.0), truth, name)
    assert last.run(max_hits=4).submitted == 2, last.result.errors  # open to them now
