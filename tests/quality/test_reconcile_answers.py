"""The marketplace is the authority: a sync replaces the answers a HIT page stored with the marketplace's."""

from __future__ import annotations

from bs4 import BeautifulSoup, Tag
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.pages.gold import exposures_for
from hits.requester.tables.campaigns import PublishedHIT, Submission, WorkerStats
from tests.helpers import hidden_fields
from tests.quality.test_followups import review
from tests.server.test_worker_site import accept_rating_hit


def test_answers_the_page_stored_are_replaced_by_the_marketplaces_and_graded_once(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    hit = accept_rating_hit(
        tmp_path, market, requester_sessions, live_server.url, "reconcile-answers", "reconcile-answers"
    )
    bot, src, assignment_id = hit.bot, hit.src, hit.assignment_id
    campaign_id, hit_id = hit.campaign_id, hit.hit_id
    form = BeautifulSoup(bot.http.get(src).text, "html.parser").find("form", id="task-form")
    assert isinstance(form, Tag)
    hidden = hidden_fields(form)
    with session_scope(requester_sessions) as session:
        published = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id))
        assert published is not None
        slots = len(published.slots)
        # The gold the page chose for this worker, with its key.
        shown = exposures_for(session, campaign_id, [assignment_id])[assignment_id]
        assert len(shown) == 1
        ((position, gold),) = shown.items()
        key = int(gold.answer["rating"])
    # The page stores the gold answered right; the marketplace receives it two steps off.
    page_answers = [key if i == position else 4 for i in range(slots)]
    market_answers = [(key + 2 if key <= 2 else key - 2) if i == position else 1 for i in range(slots)]
    stored = bot.http.post(
        live_server.url + "/tasks/submit",
        data={**hidden, **{f"rating-{i}": str(a) for i, a in enumerate(page_answers)}},
    )
    assert stored.status_code == 200, stored.text
    handoff = {"assignmentId": assignment_id, **{f"rating-{i}": str(a) for i, a in enumerate(market_answers)}}
    assert bot.http.post(live_server.url + "/mturk/externalSubmit", data=handoff).status_code == 200
    assignment = mturk.get_assignment(AssignmentId=assignment_id)["Assignment"]
    assert assignment["AssignmentStatus"] == "Submitted"
    with session_scope(requester_sessions) as session:
        submission = session.scalar(select(Submission).where(Submission.assignment_id == assignment_id))
        assert submission is not None
        assert (submission.source, submission.answers, submission.synced, submission.graded) == (
            "page",
            {"answers": page_answers},
            False,
            False,
        )

    for _ in range(2):  # a second sync changes nothing: graded once
        review(requester_sessions, market)
        with session_scope(requester_sessions) as session:
            submission = session.scalar(select(Submission).where(Submission.assignment_id == assignment_id))
            assert submission is not None
            assert submission.answers == {"answers": market_answers}
            assert submission.synced and submission.graded
            assert (submission.worker_id, submission.published_hit_id) == (bot.result.worker_id, published.id)
            # Graded on the marketplace's answer (wrong), not the page's (right).
            assert (submission.gold_correct, submission.gold_total) == (0, 1)
            record = session.scalar(
                select(WorkerStats).where(
                    WorkerStats.campaign_id == campaign_id, WorkerStats.worker_id == bot.result.worker_id
                )
            )
            assert record is not None
            assert (record.gold_correct, record.gold_total, record.assignments) == (0, 1, 1)


def test_the_marketplaces_worker_replaces_the_one_the_page_was_told(
    tmp_path, live_server, market, requester_sessions
) -> None:
    hit = accept_rating_hit(
        tmp_path, market, requester_sessions, live_server.url, "reconcile-worker", "reconcile-worker"
    )
    bot, campaign_id, src, assignment_id = hit.bot, hit.campaign_id, hit.src, hit.assignment_id
    # The worker edits the framed page's URL: the page refuses to be told another worker's id.
    someone_else = "ASOMEONEELSE0000001"
    edited = src.replace(f"workerId={bot.result.worker_id}", f"workerId={someone_else}")
    assert bot.http.get(edited).status_code == 403
    # A page answer stored under another worker's id (as one could be before pages checked
    # the marketplace's capability) is still credited to the worker the marketplace names.
    answers = {f"rating-{i}": "3" for i in range(3)}
    with session_scope(requester_sessions) as session:
        published = session.scalar(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id))
        assert published is not None
        session.add(
            Submission(
                assignment_id=assignment_id,
                published_hit_id=published.id,
                worker_id=someone_else,
                answers={"answers": [3, 3, 3]},
                source="page",
            )
        )
    handoff = {"assignmentId": assignment_id, **answers}
    assert bot.http.post(live_server.url + "/mturk/externalSubmit", data=handoff).status_code == 200

    review(requester_sessions, market)

    with session_scope(requester_sessions) as session:
        submission = session.scalar(select(Submission).where(Submission.assignment_id == assignment_id))
        assert submission is not None and submission.graded
        # The gold is credited to (and the decision judged on) the worker the marketplace names.
        records = session.scalars(select(WorkerStats.worker_id).where(WorkerStats.campaign_id == campaign_id))
        assert (submission.worker_id, list(records)) == (bot.result.worker_id, [bot.result.worker_id])
