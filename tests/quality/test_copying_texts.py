"""Identical free texts: two accounts writing the same sentences on the same pictures are flagged together."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select

from hits.db import session_scope, utcnow
from hits.requester.quality.review import decide_workers, grade_submissions
from hits.requester.tables.campaigns import (
    Campaign,
    GoldItem,
    HITSlot,
    Item,
    OutboxEntry,
    PublishedHIT,
    Submission,
    WorkerStats,
)
from hits.requester.tables.quality import CopyingPair

SENTENCES = [
    "A red kite flies high over the stone harbour wall",
    "Two children build a sandcastle next to a blue bucket",
    "An old man reads a newspaper on a green park bench",
]


def recorded_campaign(  # type: ignore[no-untyped-def]
    sessions, template: str, quality: dict, hits: int, items: int = 1, gold: list | None = None
) -> tuple[int, list[int]]:
    """A running campaign of ``hits`` HITs as publishing leaves it: ``items`` real slots, then gold slots."""
    with session_scope(sessions) as session:
        campaign = Campaign(
            name=f"copy-{template}-{uuid.uuid4().hex[:6]}",
            template=template,
            spec={"quality": quality},
            budget=10,
            status="running",
        )
        session.add(campaign)
        session.flush()
        published = []
        for n in range(hits):
            hit = PublishedHIT(
                campaign_id=campaign.id, status="open", mturk_hit_id=f"3HCOPY{uuid.uuid4().hex[:10]}"
            )
            session.add(hit)
            session.flush()
            for position in range(items):
                item = Item(
                    campaign_id=campaign.id,
                    position=n * items + position,
                    external_id=f"item-{n}-{position}",
                    payload={"image": "p.png"},
                )
                session.add(item)
                session.flush()
                session.add(HITSlot(published_hit_id=hit.id, position=position, item_id=item.id))
            for offset, answer in enumerate(gold or []):
                key = GoldItem(
                    campaign_id=campaign.id, external_id=f"gold-{n}-{offset}", payload={}, answer=answer
                )
                session.add(key)
                session.flush()
                session.add(HITSlot(published_hit_id=hit.id, position=items + offset, gold_item_id=key.id))
            published.append(hit.id)
        return campaign.id, published


def submit(sessions, hit_id: int, worker: str, answers: list, minutes: int) -> int:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        submission = Submission(
            assignment_id=f"3A{uuid.uuid4().hex[:20].upper()}",
            published_hit_id=hit_id,
            worker_id=worker,
            answers={"answers": answers},
            source="sync",
            synced=True,
            submitted_at=utcnow() + timedelta(minutes=minutes),
        )
        session.add(submission)
        session.flush()
        return submission.id


def review_recorded(sessions, campaign_id: int, ids: list[int]) -> list[int]:  # type: ignore[no-untyped-def]
    """What a sync batch does with recorded submissions: grade them, then decide their workers."""
    with session_scope(sessions) as session:
        graded = grade_submissions(session, ids)
        return decide_workers(session, campaign_id, {s.worker_id for s in graded})


def test_two_accounts_writing_the_same_sentences_are_flagged_and_held_an_honest_writer_is_not(
    requester_sessions,
) -> None:
    # Spelling needs 40 words before it speaks: the work is still undecided when the texts match.
    campaign_id, hits = recorded_campaign(requester_sessions, "write", {"min_words": 40}, 3)
    tag = uuid.uuid4().hex[:6].upper()
    first, second, honest = f"AFIRST{tag}", f"ASECOND{tag}", f"AHONEST{tag}"
    ids = []
    for n, (hit, sentence) in enumerate(zip(hits, SENTENCES, strict=True)):
        ids.append(submit(requester_sessions, hit, first, [sentence], minutes=n * 2))
        # The second account pastes the same sentence (its case and spacing changed) a minute later.
        ids.append(
            submit(requester_sessions, hit, second, ["  " + sentence.upper() + "!"], minutes=n * 2 + 1)
        )
        ids.append(submit(requester_sessions, hit, honest, [f"A picture number {n} shows something else"], n))
    # Two shared texts are not enough (the rule wants three); the third HIT brings it.
    review_recorded(requester_sessions, campaign_id, ids[:6])
    with session_scope(requester_sessions) as session:
        assert not any(session.get(WorkerStats, (campaign_id, w)).flagged for w in (first, second))  # type: ignore[union-attr]
    entries = review_recorded(requester_sessions, campaign_id, ids[6:])
    with session_scope(requester_sessions) as session:
        for worker in (first, second):
            stats = session.get(WorkerStats, (campaign_id, worker))
            assert stats is not None and stats.flagged
            assert stats.flag_reason and stats.flag_reason.startswith("suspicious signals: copying with ")
            assert "3 identical texts" in stats.flag_reason and "gold accuracy" not in stats.flag_reason
            decisions = session.scalars(
                select(Submission.decision).where(Submission.worker_id == worker)
            ).all()
            assert decisions == ["held"] * 3
        assert not session.get(WorkerStats, (campaign_id, honest)).flagged  # type: ignore[union-attr]
        pair = session.get(CopyingPair, (campaign_id, first, second))
        assert pair is not None and pair.suspicious and pair.flagged
        assert (pair.shared_texts, pair.identical_texts, pair.first_ahead, pair.second_ahead) == (3, 3, 3, 0)
        assert pair.evidence["suspicious_by"] == ["text"]
        # Nothing was rejected on the texts: the held work waits for a person.
        assert "reject" not in {
            e.action for e in session.scalars(select(OutboxEntry).where(OutboxEntry.id.in_(entries)))
        }


def test_a_pair_flagged_on_copying_and_another_signal_names_both_in_the_reason(requester_sessions) -> None:
    """Two accounts that rate everything 3: straight-lining and copying, gold (2 of 5 right) undecided."""
    quality = {"confidence": 0.999, "min_gold": 2, "copying_false_alarm": 0.01, "copying_min_shared": 10}
    gold = [{"rating": 3}, {"rating": 1}]
    campaign_id, hits = recorded_campaign(requester_sessions, "rating", quality, 3, items=4, gold=gold)
    tag = uuid.uuid4().hex[:6].upper()
    ids = [
        submit(requester_sessions, hit, f"AFLAT{n}{tag}", [3] * 6, minutes=i)
        for i, hit in enumerate(hits)
        for n in (1, 2)
    ]
    review_recorded(requester_sessions, campaign_id, ids)
    with session_scope(requester_sessions) as session:
        for n in (1, 2):
            stats = session.get(WorkerStats, (campaign_id, f"AFLAT{n}{tag}"))
            assert stats is not None and stats.flagged and (stats.gold_correct, stats.gold_total) == (3, 6)
            reason = stats.flag_reason or ""
            assert (
                reason.startswith("suspicious signals: copying with AFLAT")
                and "12/12 identical answers" in reason
            )
            assert reason.endswith("; also straightline; gold accuracy 3/6"), reason
