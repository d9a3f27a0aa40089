"""Ordinal gold with a tolerance: at gold_tolerance 1, one step off the gold rating is right, two are not."""

from __future__ import annotations

from sqlalchemy import select

from hits.db import session_scope
from hits.market import assignment_ops
from hits.market.accounts import create_worker
from hits.market.models import Worker
from hits.requester.pages.gold import choose_gold
from hits.requester.tables.campaigns import Campaign, PublishedHIT, Submission, WorkerStats
from hits.requester.templates import get_template
from hits.wire.documents import answers_to_xml
from tests.helpers import launch_demo_campaign
from tests.quality.test_followups import review

TOLERANT = {"gold_tolerance": 1}


def one_step_off(rating: int) -> int:
    return rating + 1 if rating < 4 else rating - 1


def two_steps_off(rating: int) -> int:
    return rating + 2 if rating <= 2 else rating - 2


def test_the_rating_template_passes_one_step_off_at_tolerance_one_and_not_two() -> None:
    template = get_template("rating")
    item = {"image": "pic.png", "sentence": "A red square."}

    def passed(answer: int, gold: int, options: dict) -> bool:
        score = template.score_gold_item(answer, {"rating": gold}, item, options)
        return template.gold_passed(score, options)

    for gold in (1, 2, 3, 4):
        assert passed(gold, gold, TOLERANT)
        assert passed(one_step_off(gold), gold, TOLERANT)
        assert not passed(two_steps_off(gold), gold, TOLERANT)
        # Without a tolerance (the default, and 0) only the exact rating counts.
        assert not passed(one_step_off(gold), gold, {})
        assert not passed(one_step_off(gold), gold, {"gold_tolerance": 0})
    # Both neighbours count, not only the one above.
    assert passed(2, 3, TOLERANT) and passed(4, 3, TOLERANT)
    assert not passed(1, 3, TOLERANT) and not passed(4, 2, TOLERANT)


def test_grading_a_submission_counts_one_step_off_as_right_and_two_steps_as_wrong(
    tmp_path, live_server, market, requester_sessions, market_sessions
) -> None:
    campaign_id, _ = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="tolerance"
    )
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        # What create_campaign stores for a file with `template_options: {gold_tolerance: 1}`.
        campaign.spec = {**campaign.spec, "template_options": TOLERANT}
        published = session.scalar(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id))
        assert published is not None
        hit_id, published_id = published.mturk_hit_id, published.id
    template = get_template("rating")
    off_by = {"near": one_step_off, "far": two_steps_off}
    assignments: dict[str, str] = {}
    workers: dict[str, str] = {}
    for name, miss in off_by.items():
        with session_scope(market_sessions) as session:
            worker = create_worker(session, f"tolerance-{name}", "a-long-password")
            assignment = assignment_ops.accept(session, worker, str(hit_id))
            worker_id, assignment_id = worker.id, assignment.id
        with session_scope(requester_sessions) as session:
            published = session.get(PublishedHIT, published_id)
            assert published is not None
            # The worker opens the page: their gold is chosen, as the HIT page does.
            gold = choose_gold(session, published, assignment_id, worker_id)
            answers = [
                miss(int(gold[slot.position].answer["rating"])) if slot.position in gold else 4
                for slot in published.slots
            ]
        assert len(gold) == 1
        with session_scope(market_sessions) as session:
            worker = session.get(Worker, worker_id)
            assert worker is not None
            fields = template.answer_fields(answers)
            assignment_ops.submit(session, worker, assignment_id, answers_to_xml(fields))
        assignments[name], workers[name] = assignment_id, worker_id

    review(requester_sessions, market)

    with session_scope(requester_sessions) as session:
        graded = {
            s.assignment_id: (s.graded, s.gold_correct, s.gold_total)
            for s in session.scalars(select(Submission).where(Submission.published_hit_id == published_id))
        }
        assert graded == {assignments["near"]: (True, 1, 1), assignments["far"]: (True, 0, 1)}
        records = {
            s.worker_id: (s.gold_correct, s.gold_total)
            for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
        }
        assert records == {workers["near"]: (1, 1), workers["far"]: (0, 1)}
