"""A rejected Task 1 (object annotation) assignment is redone by another worker once, inside the workflow.

Run by the real Celery worker with a simulated crowd over HTTP: a spammer
fails Task 1's gold, the workflow offers that assignment again (one more
assignment of the same HIT, paid out of the workflow's budget), a careful
worker does it, and Task 2 starts from their triples.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
import yaml
from sqlalchemy import select

from demo.crowd import PROFILES, Bot, Profile
from demo.iiw import _filler
from demo.runner import spawn_worker, stop_process
from demo.tasks import iiw
from demo.tasks.iiw_objects import write as write_both_tasks
from hits.db import session_scope
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.campaigns import OutboxEntry, PublishedHIT, Submission
from hits.requester.tables.workflows import Chain, ChainRound, Workflow
from hits.requester.workflows.engine import stages_of, workflow_committed
from hits.requester.workflows.publish import run_step
from hits.requester.workflows.setup import create_workflow
from tests.workers.test_review_pipeline import worker_env
from tests.workflows.helpers import work_until
from tests.workflows.test_refine_blinding import _sync

pytestmark = pytest.mark.celery

NAME = "iiw-redo"


def _workflow_file(  # type: ignore[no-untyped-def]
    folder, budget: str, pictures: int = 1, name: str = NAME, rewards: tuple[str, str] = ("0.15", "0.15")
) -> dict:
    """The demo's two tasks, one annotator a HIT, one gold item deciding each worker; the bots' truths."""
    task1_truth, truth = write_both_tasks(folder, pictures)
    spec = iiw.campaign(pictures)
    spec.update(
        name=name,
        title=f"Check the objects {name}",
        reward=rewards[0],
        budget=budget,
        assignments_per_hit=1,
        items_per_hit=1,
        gold_per_hit=1,
        # One gold item decides: right approves (P(acc > 0.6) = 0.64), wrong rejects (0.84).
        quality={"accuracy_threshold": 0.6, "confidence": 0.6, "min_gold": 1},
    )
    spec["workflow"]["stages"][0].update(
        title=f"Improve a description {name}", reward=rewards[1], rounds={"max_rounds": 2}
    )
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return {"task1": task1_truth, "task2": truth}


PERFECT = Profile("perfect", 1.0)


def _bot(url: str, name: str, profile: Profile, truths: dict, title: str) -> Bot:  # type: ignore[type-arg]
    """A signed-in bot for both tasks, seeing only this workflow's HITs."""
    made = Bot(url, name, profile, truths["task2"], fill_form=_filler(truths["task1"]))
    made.title_filter = title
    made.sign_in()
    return made


def _launch(folder, market, sessions, url: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Store the workflow; a step seeds Task 1 and publishes it: (workflow id, Task 1's campaign id)."""
    with session_scope(sessions) as session:
        workflow = create_workflow(session, load_campaign_file(folder / "campaign.yaml"))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
        task1 = stages_of(session, workflow_id)[0].campaign_id
    step = run_step(sessions, market, workflow_id, url + "/tasks/hit")
    assert step.seeded == step.published and step.errors == []
    return workflow_id, task1


def test_a_rejected_task1_assignment_is_redone_once_by_another_worker_within_the_budget(
    tmp_path, settings, live_server, requester, market, mturk, requester_sessions
) -> None:
    truths = _workflow_file(tmp_path, "2.00")
    workflow_id, task1 = _launch(tmp_path, market, requester_sessions, live_server.url)

    spammer = _bot(live_server.url, "redo-spam", PROFILES["spammer"], truths, NAME)
    careful = [_bot(live_server.url, f"redo-careful-{i}", PERFECT, truths, NAME) for i in range(4)]

    def status() -> str:
        with session_scope(requester_sessions) as session:
            found = session.get(Workflow, workflow_id)
            return found.status if found else ""

    process = spawn_worker(worker_env(settings, requester), tmp_path / "celery.log")
    try:
        work_until([spammer], lambda: spammer.result.submitted == 1, timeout=60)  # Task 1's only HIT
        work_until(careful, lambda: status() == "done", timeout=240)
    finally:
        stop_process(process)
    # Another step changes nothing: the redo was queued once.
    run_step(requester_sessions, market, workflow_id, live_server.url + "/tasks/hit")

    with session_scope(requester_sessions) as session:
        hit = session.scalar(select(PublishedHIT).where(PublishedHIT.campaign_id == task1))
        assert hit is not None and hit.mturk_hit_id
        work = session.scalars(
            select(Submission).where(Submission.published_hit_id == hit.id).order_by(Submission.id)
        ).all()
        reposts = session.scalars(
            select(OutboxEntry).where(OutboxEntry.campaign_id == task1, OutboxEntry.action == "repost")
        ).all()
        describe = stages_of(session, workflow_id)[1]
        chain = session.scalar(select(Chain).where(Chain.stage_id == describe.id))
        assert chain is not None
        rounds = session.scalars(select(ChainRound).where(ChainRound.chain_id == chain.id)).all()
        workflow = session.get(Workflow, workflow_id)
        assert workflow is not None
        committed = workflow_committed(session, workflow)

    # The spammer's work was rejected; the same HIT got one more assignment, done well by someone else.
    assert [(s.worker_id, s.decision) for s in work][0] == (spammer.result.worker_id, "reject")
    assert len(work) == 2 and work[1].decision == "approve" and work[1].worker_id != spammer.result.worker_id
    assert [(r.target, r.status) for r in reposts] == [(work[0].assignment_id, "done")]
    on_market = mturk.get_hit(HITId=hit.mturk_hit_id)["HIT"]
    assert on_market["MaxAssignments"] == 2
    states = sorted(
        a["AssignmentStatus"] for a in mturk.list_assignments_for_hit(HITId=hit.mturk_hit_id)["Assignments"]
    )
    assert states == ["Approved", "Rejected"]

    # Task 2 began from the redone, approved triples, and ran to its end.
    assert chain.status == "done" and chain.seed_source == "seeder file + upstream stage"
    for triple in work[1].answers["answers"][0]:
        assert triple["description"].strip().rstrip(".").casefold() in str(chain.seed_text).casefold()
    assert rounds and all(r.worker_id != spammer.result.worker_id for r in rounds)

    # The redo is paid out of the workflow's one budget: Task 1's HIT, its redo and every round,
    # $0.15 each and MTurk's 20% fee.
    assert committed == Decimal("0.18") * (2 + len(rounds)) <= Decimal("2.00")


def test_a_redo_that_the_budget_left_by_every_stage_cannot_pay_is_not_queued(
    tmp_path, live_server, market, requester_sessions
) -> None:
    # Task 1 costs $0.60 an assignment, a round $0.06. The $1.80 budget pays Task 1's two HITs and
    # one redo ($1.80) if Task 1 is counted alone, but not once a round of Task 2 is committed too.
    name = "iiw-redo-budget"
    truths = _workflow_file(tmp_path, "1.80", pictures=2, name=name, rewards=("0.50", "0.05"))
    workflow_id, task1 = _launch(tmp_path, market, requester_sessions, live_server.url)
    hit_page = live_server.url + "/tasks/hit"
    careful = _bot(live_server.url, "budget-careful", PERFECT, truths, name)
    work_until([careful], lambda: careful.result.submitted == 1, timeout=60)
    _sync(requester_sessions, market)
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1  # its round 1
    # Task 1's other HIT (not the round): its title.
    spammer = _bot(live_server.url, "budget-spam", PROFILES["spammer"], truths, f"Check the objects {name}")
    work_until([spammer], lambda: spammer.result.submitted == 1, timeout=60)
    _sync(requester_sessions, market)
    report = run_step(requester_sessions, market, workflow_id, hit_page)

    with session_scope(requester_sessions) as session:
        rejected = session.scalar(select(Submission).where(Submission.worker_id == spammer.result.worker_id))
        assert rejected is not None and rejected.decision == "reject"
        reposts = session.scalars(
            select(OutboxEntry.id).where(OutboxEntry.campaign_id == task1, OutboxEntry.action == "repost")
        ).all()
        workflow = session.get(Workflow, workflow_id)
        assert workflow is not None
        committed = workflow_committed(session, workflow)
    assert reposts == [] and report.outbox == []
    assert rejected.evidence["not_reposted"] == (
        "budget: redoing it would cost 0.60, and 1.26 of the workflow's 1.80 is committed"
    )
    assert committed == Decimal("1.26")
