"""A redo keeping out the workers of many pictures adds one requirement, and its moved HIT is still synced.

Against the running marketplace: a HIT whose redo must keep out the workers
of more pictures than a HIT type takes requirements (MTurk's 10) is moved to
a type with one requirement more, the workers are kept out and a newcomer
gets the redo; applying the entry again changes nothing. ListReviewableHITs
lists the moved HIT under its new type, where the sync looks too.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select

from demo.crowd import Profile
from hits.db import session_scope
from hits.requester.quality import sync_queue
from hits.requester.quality.outbox import (
    MOVED_TO,
    TooManyRequirements,
    apply_entries,
    exclude_from_hit,
    redo_qualification_name,
)
from hits.requester.tables.campaigns import OutboxEntry, PublishedHIT
from hits.wire.limits import MAX_REQUIREMENTS
from tests.helpers import campaign_bot, hit_params, launch_demo_campaign
from tests.server.worker_helpers import WorkerClient

NAME = "redo-many"


def test_a_redo_keeping_out_more_pictures_than_requirements_fit_is_posted_and_synced(
    tmp_path, live_server, market, requester_sessions
) -> None:  # type: ignore[no-untyped-def]
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name=NAME
    )
    with session_scope(requester_sessions) as session:
        hit_id = session.scalar(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        )
    assert hit_id is not None
    first = campaign_bot(live_server.url, "many-a", Profile("perfect", 1.0), truth, NAME)
    second = campaign_bot(live_server.url, "many-b", Profile("perfect", 1.0), truth, NAME)
    assert first.run(max_hits=1).submitted == 1 and second.run(max_hits=1).submitted == 1
    [rejected, *_] = market.assignments_for_hit(hit_id, ["Submitted"])
    market.reject(rejected["AssignmentId"], "redo test")
    before = market.get_hit(hit_id)
    # One rule per picture's rounds, more than a HIT type takes: each names a worker who saw its picture.
    seen = [WorkerClient(live_server.url, f"many-seen{i}") for i in range(MAX_REQUIREMENTS + 2)]
    rules: list[dict[str, Any]] = [
        {
            "qualification_type_id": market.ensure_qualification_type(
                f"hitforge {NAME} picture {i}: worked on", "x"
            ),
            "workers": [worker.worker_id],
        }
        for i, worker in enumerate(seen)
    ]
    with session_scope(requester_sessions) as session:
        entry = OutboxEntry(
            campaign_id=campaign_id,
            action="repost",
            target=rejected["AssignmentId"],
            payload={"hit_id": hit_id, "cost": "0.05", "exclude": rules},
        )
        session.add(entry)
        session.flush()
        entry_id = entry.id
    report = apply_entries(requester_sessions, market, [entry_id])
    assert report.failures == {} and report.outcomes == {entry_id: "repost"}
    moved = market.get_hit(hit_id)
    assert moved["MaxAssignments"] == 3 and moved["HITTypeId"] != before["HITTypeId"]
    # One requirement more than before, however many pictures: the HIT's own redo qualification.
    requirements = moved["QualificationRequirements"]
    assert len(requirements) == len(before.get("QualificationRequirements") or []) + 1
    redo_type = market.find_qualification_type(redo_qualification_name(hit_id))
    assert redo_type is not None
    assert requirements[-1]["QualificationTypeId"] == redo_type["QualificationTypeId"]
    assert requirements[-1]["Comparator"] == "DoesNotExist"
    for worker in seen:
        assert worker.get(f"/hits/{hit_id}").status_code == 403
    assert WorkerClient(live_server.url, "many-fresh").get(f"/hits/{hit_id}").status_code == 200

    # Applied again (its bookkeeping lost): no second type, no second requirement.
    with session_scope(requester_sessions) as session:
        replayed = session.get(OutboxEntry, entry_id)
        assert replayed is not None and replayed.payload[MOVED_TO] == moved["HITTypeId"]
        replayed.status = "pending"
    apply_entries(requester_sessions, market, [entry_id])
    again = market.get_hit(hit_id)
    assert (again["HITTypeId"], again["MaxAssignments"]) == (moved["HITTypeId"], 3)
    assert again["QualificationRequirements"] == requirements

    # A newcomer does the redo; the HIT is Reviewable under its new type, and the sync lists it there.
    third = campaign_bot(live_server.url, "many-c", Profile("perfect", 1.0), truth, NAME)
    assert third.run(max_hits=1).submitted == 1
    sent: list[list[Any]] = []
    sync_queue.queue_syncs(requester_sessions, market, sent.extend, batch_size=25)
    # What ListReviewableHITs said of the HIT travels with its sync (not GetHIT after page-stored work).
    assert [(t[2], t[3] is not None) for t in sent] == [(hit_id, True)]


def test_a_redo_of_a_hit_already_at_the_requirement_limit_fails_clearly(live_server, market) -> None:  # type: ignore[no-untyped-def]
    full = [
        {
            "QualificationTypeId": market.ensure_qualification_type(f"hitforge {NAME} full {i}", "x"),
            "Comparator": "DoesNotExist",
        }
        for i in range(MAX_REQUIREMENTS)
    ]
    hit = market.create_hit(
        unique_request_token=f"{NAME}-full",
        reward=Decimal("0.25"),
        **{k: v for k, v in hit_params(QualificationRequirements=full).items() if k != "Reward"},
    )
    rules = [
        {
            "qualification_type_id": market.ensure_qualification_type(f"hitforge {NAME} picture", "x"),
            "workers": [WorkerClient(live_server.url, "full").worker_id],
        }
    ]
    with pytest.raises(TooManyRequirements, match="already has 10 qualification requirements") as refused:
        exclude_from_hit(market, hit["HITId"], rules)
    assert not refused.value.retryable
    assert market.get_hit(hit["HITId"])["HITTypeId"] == hit["HITTypeId"]  # left as it was
