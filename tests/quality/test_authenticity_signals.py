"""Authenticity signals: the typing record read, and the review holding (never rejecting) on it.

The record comes from the worker's browser, so every path here checks that it
can only hold work: forged, malformed or huge records are no record, a clean
record approves nothing a worker's gold would not, and a confident gold
rejection is not softened by one.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.answers import counted_submissions
from hits.requester.quality.authenticity import (
    MAX_KEYS_PER_SECOND,
    free_texts,
    record_in_words,
    record_signals,
)
from hits.requester.quality.evidence import signal_sentences
from hits.requester.quality.review import decide_workers
from hits.requester.tables.campaigns import (
    Campaign,
    HITSlot,
    Item,
    OutboxEntry,
    PublishedHIT,
    Submission,
    WorkerStats,
)
from hits.wire.authenticity import FIELD, MAX_FIELD_CHARS, kept_field, parse_summary, split_summary

PASTED = {"chars": 150, "keys": 2, "pastes": 3, "pasted": 148, "blurs": 2, "hides": 1, "first_ms": 4100}
TYPED = {"chars": 150, "keys": 171, "pastes": 0, "pasted": 0, "typing_ms": 38_000, "first_ms": 5200}


# --- the record as sent -----------------------------------------------------------------------


def test_a_readable_record_keeps_known_whole_counts_only() -> None:
    text = json.dumps({"v": 1, **TYPED, "content": "never sent", "page_ms": 60_000.0})
    assert parse_summary(text) == {**TYPED, "page_ms": 60_000}


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "not json",
        "[1, 2]",
        '{"keys": 3}',  # no version
        '{"v": 2, "keys": 3}',
        '{"v": 1}',
        '{"v": 1, "keys": -1, "chars": true, "pasted": 1.5, "pastes": "3", "blurs": 1e300}',
        '{"v": 1, "keys": 99999999999999999999999}',
        "[" * 5000,
        json.dumps({"v": 1, "keys": 1, "pad": "x" * MAX_FIELD_CHARS}),
    ],
)
def test_a_malformed_forged_or_huge_record_is_no_record(text: Any) -> None:
    assert parse_summary(text) is None


def test_the_record_is_taken_out_of_the_answers_and_an_oversized_one_is_not_stored() -> None:
    fields = {"caption": "a cat", FIELD: json.dumps({"v": 1, **PASTED})}
    rest, record = split_summary(fields)
    assert rest == {"caption": "a cat"} and record == PASTED
    assert split_summary({"caption": "a cat"}) == ({"caption": "a cat"}, None)
    assert kept_field(FIELD, "x" * MAX_FIELD_CHARS) and not kept_field(FIELD, "x" * (MAX_FIELD_CHARS + 1))
    assert kept_field("essay", "x" * 100_000)  # only the record is capped


# --- the signals of one record ------------------------------------------------------------------


def _fired(record: dict[str, int] | None) -> list[str]:
    return sorted(s.name for s in record_signals(record) if s.suspicious)


def test_a_mostly_pasted_page_fires_paste_and_typing_at_a_human_pace_fires_nothing() -> None:
    assert _fired(PASTED) == ["paste"]
    assert _fired(TYPED) == []
    assert _fired(None) == [] and _fired({}) == []
    # A pasted word or two in a short answer is nothing; half the text pasted is "mostly".
    assert _fired({"chars": 12, "keys": 0, "pastes": 1, "pasted": 12}) == []
    assert _fired({"chars": 100, "keys": 50, "pastes": 1, "pasted": 50}) == ["paste"]
    assert _fired({"chars": 100, "keys": 60, "pastes": 1, "pasted": 40}) == []
    # A paste deleted again produced nothing: counted only up to the characters produced.
    paste = record_signals({"chars": 40, "keys": 45, "pastes": 1, "pasted": 5000})[0]
    assert paste.value == 1.0 and paste.suspicious


def test_typing_faster_than_people_or_text_without_keystrokes_fires_typing_speed() -> None:
    fast = {"chars": 300, "keys": 300, "pastes": 0, "pasted": 0, "typing_ms": 3000}  # 100 a second
    assert _fired(fast) == ["typing_speed"]
    speed = record_signals(fast)[1]
    assert speed.value is not None and speed.value > MAX_KEYS_PER_SECOND
    # A short quick burst is not judged.
    assert _fired({"chars": 10, "keys": 10, "typing_ms": 200}) == []
    # Text that appeared with no keystrokes and no paste (set by a script).
    assert _fired({"chars": 80, "keys": 0, "pastes": 0, "pasted": 0}) == ["typing_speed"]
    # A phone's word suggestions: a keystroke or so a word still explains the text.
    assert _fired({"chars": 80, "keys": 14, "pastes": 0, "pasted": 0, "typing_ms": 20_000}) == []


def test_the_record_in_words_says_counts_only() -> None:
    words = record_in_words(PASTED)
    assert "pasted 148 of 150 characters in 3 pastes" in words
    assert "2 keystrokes" in words and "left the page 2 times (hidden 1 time)" in words
    assert "first input after 4.1 s" in words
    assert "no input recorded" in record_in_words({"chars": 0, "keys": 0})


def test_free_text_is_found_in_layout_fields_and_crowd_json_but_labels_are_not() -> None:
    long = "The old lighthouse keeper walked slowly along the rocky shore at dawn."
    assert list(free_texts({"story": long, "rating": "4"})) != []
    assert list(free_texts(json.dumps([{"story": long}]))) != []
    assert list(free_texts("positive")) == [] and list(free_texts(["a", "b"])) == []


# --- the review -------------------------------------------------------------------------------


def _campaign(session, template: str, quality: dict[str, Any] | None = None) -> Campaign:  # type: ignore[no-untyped-def]
    campaign = Campaign(
        name=f"auth-{uuid.uuid4().hex[:8]}",
        template=template,
        # The gold-only rule, whose approvals the signals here must not override (worker_model: false).
        spec={"quality": {"worker_model": False, **(quality or {})}, "reward": "0.10"},
        budget=100,
        status="running",
    )
    session.add(campaign)
    session.flush()
    return campaign


def _work(session, campaign: Campaign, worker: str, answers: list[Any], record=None) -> Submission:  # type: ignore[no-untyped-def]
    tag = uuid.uuid4().hex[:12].upper()
    published = PublishedHIT(campaign_id=campaign.id, status="open", mturk_hit_id="3H" + tag)
    session.add(published)
    session.flush()
    submission = Submission(
        assignment_id="3A" + tag,
        published_hit_id=published.id,
        worker_id=worker,
        answers={"answers": answers},
        authenticity=record,
        synced=True,
        graded=True,
    )
    session.add(submission)
    session.flush()
    return submission


def _on_item(session, submission: Submission, item: Item) -> None:  # type: ignore[no-untyped-def]
    """Record that ``submission``'s HIT showed ``item`` in its first place."""
    session.add(HITSlot(published_hit_id=submission.published_hit_id, position=0, item_id=item.id))
    session.flush()


def _worker() -> str:
    return "A" + uuid.uuid4().hex[:13].upper()


def _gold(session, campaign: Campaign, worker: str, correct: int, total: int) -> None:  # type: ignore[no-untyped-def]
    session.add(
        WorkerStats(
            campaign_id=campaign.id, worker_id=worker, gold_correct=correct, gold_total=total, assignments=1
        )
    )
    session.flush()


def _decided(sessions, ids: list[int]) -> list[Submission]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        rows = [session.get(Submission, i) for i in ids]
        session.expunge_all()
    return [r for r in rows if r is not None]


def test_gold_approval_does_not_release_pasted_work_and_a_gold_rejection_still_rejects(
    requester_sessions,
) -> None:
    good, pasting, bad = _worker(), _worker(), _worker()
    with session_scope(requester_sessions) as session:
        campaign = _campaign(session, "rating")
        for worker, (correct, total) in ((good, (20, 20)), (pasting, (20, 20)), (bad, (0, 20))):
            _gold(session, campaign, worker, correct, total)
        ids = [
            _work(session, campaign, good, [4, 3], TYPED).id,
            _work(session, campaign, pasting, [4, 3], PASTED).id,
            _work(session, campaign, bad, [1, 1], PASTED).id,
        ]
        decide_workers(session, campaign.id, [good, pasting, bad])
        campaign_id = campaign.id
    typed, pasted, rejected = _decided(requester_sessions, ids)
    assert typed.decision == "approve"
    assert pasted.decision == "held"
    assert pasted.evidence is not None and pasted.evidence["held_for"] == "authenticity"
    assert pasted.evidence["authenticity"]["suspicious"] == ["paste"]
    assert pasted.evidence["authenticity"]["paste"]["pasted"] == 148
    # Confident gold decides the bad worker as ever (the record neither causes nor prevents it).
    assert rejected.decision == "reject"
    with session_scope(requester_sessions) as session:
        actions = {
            (e.action, e.target)
            for e in session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id))
        }
        assert ("approve", pasted.assignment_id) not in actions
        assert ("reject", pasted.assignment_id) not in actions
        # Held as a suspect: out of the results until a person approves it.
        assert pasted.assignment_id not in {
            r.assignment_id for r in counted_submissions(session, campaign_id)
        }
        stats = session.get(WorkerStats, (campaign_id, pasting))
        assert stats is not None and not stats.flagged  # the assignment is held, the worker not flagged
        sentences = signal_sentences(session.get(Submission, pasted.id), stats)  # type: ignore[arg-type]
    said = " ".join(sentences)
    assert "Signal paste: most of the text was pasted into the page, not typed there (148 of 150" in said
    assert "pasted 148 of 150 characters in 3 pastes" in said
    assert "never reject work on their own" in said


def test_held_pasted_work_is_rejected_with_the_rest_only_when_gold_later_condemns_the_worker(
    requester_sessions,
) -> None:
    worker = _worker()
    with session_scope(requester_sessions) as session:
        campaign = _campaign(session, "rating", {"min_gold": 3})
        _gold(session, campaign, worker, 1, 2)  # gold cannot tell yet
        first = _work(session, campaign, worker, [2, 2], PASTED).id
        decide_workers(session, campaign.id, [worker])
        campaign_id = campaign.id
    assert _decided(requester_sessions, [first])[0].decision == "held"  # held, not rejected
    with session_scope(requester_sessions) as session:
        stats = session.get(WorkerStats, (campaign_id, worker))
        assert stats is not None
        stats.gold_correct, stats.gold_total = 1, 30
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        decide_workers(session, campaign_id, [worker])
    assert _decided(requester_sessions, [first])[0].decision == "reject"


def test_free_text_pasted_is_held_typed_waits_and_the_policy_can_turn_it_off(requester_sessions) -> None:
    typist, paster, other = _worker(), _worker(), _worker()
    with session_scope(requester_sessions) as session:
        campaign = _campaign(session, "write")
        typed = _work(session, campaign, typist, ["A red circle sits left of a blue square."], TYPED).id
        pasted = _work(session, campaign, paster, ["Two green triangles point up above a line."], PASTED).id
        off = _campaign(session, "write", {"hold_on_authenticity": False})
        ignored = _work(session, off, other, ["One purple square inside a larger circle."], PASTED).id
        decide_workers(session, campaign.id, [typist, paster])
        decide_workers(session, off.id, [other])
    t, p, o = _decided(requester_sessions, [typed, pasted, ignored])
    assert t.decision is None  # spelling has too few words to judge: it waits, as before
    assert p.decision == "held" and p.evidence is not None and p.evidence["held_for"] == "authenticity"
    assert o.decision is None


NEAR = [
    "the old lighthouse keeper walked slowly along the rocky shore at dawn",
    "The old lighthouse keeper walked slowly along the rocky shore at dawn!",
    "An old lighthouse keeper walks slowly along the rocky shore at dawn.",
]


def test_near_duplicate_texts_of_two_workers_hold_both_and_name_each_other(requester_sessions) -> None:
    first, second, third, honest = _worker(), _worker(), _worker(), _worker()
    with session_scope(requester_sessions) as session:
        campaign = _campaign(session, "write")
        ids = [
            _work(session, campaign, first, [NEAR[0]]).id,
            _work(session, campaign, second, [NEAR[1]]).id,
            _work(session, campaign, third, [NEAR[2]]).id,
            _work(session, campaign, honest, ["A fisherman mends a torn blue net beside his small boat."]).id,
            # The same worker repeating themself is not a duplicate across workers.
            _work(session, campaign, honest, ["A fisherman mends a torn blue net beside his small boat!"]).id,
        ]
        decide_workers(session, campaign.id, [first, second, third, honest])
    a, b, c, d, e = _decided(requester_sessions, ids)
    for held, partner in ((a, b), (b, a)):
        assert held.decision == "held" and held.evidence is not None
        found = held.evidence["authenticity"]
        assert found["suspicious"] == ["near_duplicate"]
        assert found["near_duplicate"]["other_assignment"] in {partner.assignment_id, c.assignment_id}
        assert found["near_duplicate"]["value"] >= 0.9
    assert c.decision == "held"  # 90% alike or more after normalising: "walks" for "walked"
    assert a.evidence["authenticity"]["near_duplicate"]["submitted_first"] is True  # type: ignore[index]
    assert d.decision == e.decision == "approve"  # by their spelling; nothing held them


def test_answers_to_the_same_item_agree_and_only_the_same_text_under_another_item_is_a_duplicate(
    requester_sessions,
) -> None:
    """Two people correcting one draft converge honestly; the same words under a different picture do not."""
    first, second, third = _worker(), _worker(), _worker()
    with session_scope(requester_sessions) as session:
        campaign = _campaign(session, "write")
        lighthouse, fisherman = (
            Item(campaign_id=campaign.id, position=n, external_id=name, payload={})
            for n, name in enumerate(("lighthouse", "fisherman"))
        )
        session.add_all([lighthouse, fisherman])
        session.flush()
        agreeing = [_work(session, campaign, worker, [NEAR[0]]) for worker in (first, second)]
        for submission in agreeing:
            _on_item(session, submission, lighthouse)
        canned = _work(session, campaign, third, [NEAR[1]])
        _on_item(session, canned, fisherman)
        ids = [s.id for s in [*agreeing, canned]]
        decide_workers(session, campaign.id, [first, second, third])
    a, b, c = _decided(requester_sessions, ids)
    assert c.decision == "held" and c.evidence is not None
    assert c.evidence["authenticity"]["near_duplicate"]["other_worker"] in {first, second}
    # The two on the lighthouse are held too, but only because the canned copy matches them.
    for held in (a, b):
        assert held.evidence is not None
        assert held.evidence["authenticity"]["near_duplicate"]["other_worker"] == third


def test_two_workers_agreeing_on_one_item_are_not_held_for_it(requester_sessions) -> None:
    first, second = _worker(), _worker()
    with session_scope(requester_sessions) as session:
        campaign = _campaign(session, "write")
        item = Item(campaign_id=campaign.id, position=0, external_id="lighthouse", payload={})
        session.add(item)
        session.flush()
        both = [_work(session, campaign, worker, [NEAR[0]]) for worker in (first, second)]
        for submission in both:
            _on_item(session, submission, item)
        ids = [s.id for s in both]
        decide_workers(session, campaign.id, [first, second])
    for decided in _decided(requester_sessions, ids):
        assert decided.decision != "held", decided.evidence


def test_a_draft_carried_on_unchanged_into_the_next_round_is_nobodys_copy(requester_sessions) -> None:
    """Round 2 shows round 1's text; a worker who finds it right leaves it as it is, under another item."""
    first, second = _worker(), _worker()
    with session_scope(requester_sessions) as session:
        campaign = _campaign(session, "refine")
        round_one = Item(
            campaign_id=campaign.id, position=0, external_id="pic#r1", payload={"previous": "a lighthouse"}
        )
        round_two = Item(
            campaign_id=campaign.id, position=1, external_id="pic#r2", payload={"previous": NEAR[0]}
        )
        session.add_all([round_one, round_two])
        session.flush()
        wrote = _work(session, campaign, first, [NEAR[0]])
        _on_item(session, wrote, round_one)
        kept = _work(session, campaign, second, [NEAR[1]])
        _on_item(session, kept, round_two)
        ids = [wrote.id, kept.id]
        decide_workers(session, campaign.id, [first, second])
    for decided in _decided(requester_sessions, ids):
        assert decided.decision != "held", decided.evidence
