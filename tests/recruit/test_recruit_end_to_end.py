"""A crowd recruited on Prolific (the stand-in), end to end: a real server, a real Celery worker.

Six participants enter by the study URL: four work well, two spam. One of the
good ones returns their place after one task; a seventh participant takes a
place and does the work that was left. The review pipeline (the Celery
worker) grades and decides the assignments and queues the bonus rule's
bonuses; settling (``hitforge recruit sync``'s code) approves the good places
on Prolific and rejects the spammers' with a category and a long enough
message; the returned place is recorded, never transitioned. The first pay
call of the bonuses fails: each bonus is still paid exactly once.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import select

from demo.profiles import PROFILES
from demo.recruit import Participant
from demo.run import write_campaign
from demo.runner import spawn_worker, stop_process
from demo.tasks import demo_tasks
from hits.db import session_scope
from hits.requester.campaigns.recruitment import launch_study, settle_places
from hits.requester.recruit.prolific import wire
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin
from hits.requester.tables.recruiting import Recruitment, RecruitRelay
from server.requester.recruit_pages import RECRUITER_EXTENSION
from tests.helpers import publish_campaign_file
from tests.workers.test_review_pipeline import worker_env

pytestmark = pytest.mark.celery

#: The demo's rating campaign: 6 HITs x 3 assignments, 3 HITs a place: 6 places.
HITS = 6


def _wait(predicate: Any, what: str, timeout: float = 150.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def test_six_participants_two_spammers_one_return_and_a_bonus_paid_once(
    tmp_path: Path,
    settings: Any,
    live_server: Any,
    requester: Any,
    market: Any,
    requester_sessions: Any,
    standin: RunningStandin,
) -> None:
    task = demo_tasks()["rating"]
    truth = write_campaign(tmp_path, task, HITS, recruit=True)
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    campaign_id = publish_campaign_file(tmp_path, spec, market, requester_sessions, live_server.url)
    prolific = ProlificClient(standin.api_url, standin.app.token, backoff=0, sleep=lambda _: None)
    live_server.server.app.extensions[RECRUITER_EXTENSION] = prolific
    report = launch_study(requester_sessions, prolific, campaign_id, live_server.url)
    assert report is not None and report.places == 6
    study_id = report.study_id
    standin.app.state.fail_before["bonus_pay"] = [503]  # the first pay call does nothing and says so

    env = {
        **worker_env(settings, requester),
        "HITFORGE_PROLIFIC_API_URL": standin.api_url,
        "HITFORGE_PROLIFIC_TOKEN": standin.app.token,
    }
    worker = spawn_worker(env, tmp_path / "celery.log")
    try:

        def participant(name: str, profile: str, seed: int) -> Participant:
            return Participant(
                live_server.url,
                name,
                PROFILES[profile],
                truth,
                standin.app,
                study_id,
                seed=seed,
                fill_form=task.fill_form,
            )

        good = [participant(f"good-{n}", "diligent", n) for n in range(3)]
        spam = [participant(f"spam-{n}", "spammer", 10 + n) for n in range(2)]
        returner = participant("good-returns", "diligent", 20)
        returner.sign_in()
        assert returner.work_one() and returner.result.submitted == 1
        standin.app.give_back(returner.session_id)  # RETURNED on Prolific, half-way through
        for bot in [*good, *spam]:
            assert bot.run(max_hits=3).submitted == 3, bot.result.errors
        late = participant("good-late", "diligent", 30)  # takes the place the return freed
        assert late.run(max_hits=3).submitted == 2, late.result.errors  # what was left: 2 tasks

        # Every assignment of every HIT was done: the returned place's work by someone else.
        done = sum(b.result.submitted for b in [returner, *good, *spam, late])
        assert done == HITS * 3

        def settled() -> bool:
            settle_places(requester_sessions, prolific, campaign_id)
            statuses = Counter(s["status"] for s in standin.app.state.submissions.values())
            with session_scope(requester_sessions) as session:
                row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
                assert row is not None
                relays = session.scalars(
                    select(RecruitRelay).where(RecruitRelay.recruitment_id == row.id)
                ).all()
                bonuses_done = [r for r in relays if r.action == "bonus" and r.status == "done"]
            return statuses["APPROVED"] == 4 and statuses["REJECTED"] == 2 and len(bonuses_done) >= 1

        _wait(settled, "four places approved, two rejected and a bonus paid")
    finally:
        stop_process(worker)
    log = (tmp_path / "celery.log").read_text()
    assert "Traceback" not in log, log[-3000:]

    subs = {s["participant"]: s for s in standin.app.state.submissions.values()}
    assert {subs[b.pid]["status"] for b in [*good, late]} == {"APPROVED"}
    assert {subs[b.pid]["status"] for b in spam} == {"REJECTED"}
    assert subs[returner.pid]["status"] == "RETURNED"  # recorded, never transitioned
    rejections = [
        body
        for method, path, body in standin.app.state.carried_out
        if path.endswith("/transition/") and body.get("action") == "REJECT"
    ]
    assert len(rejections) == 2
    for body in rejections:
        assert body["rejection_category"] in wire.REJECTION_CATEGORIES
        assert len(body["message"]) >= wire.MIN_REJECT_MESSAGE
    transitions = Counter(
        path
        for method, path, body in standin.app.state.carried_out
        if path.startswith("/submissions/") and path.endswith("/transition/")
    )
    assert set(transitions.values()) == {1}, [  # each place decided once
        (path, body) for method, path, body in standin.app.state.carried_out if path.endswith("/transition/")
    ]
    # Each bonus set up was paid once, though the first pay call failed.
    pays = Counter(str(p["id"]) for p in standin.app.state.paid)
    assert pays and set(pays.values()) == {1}
    assert standin.app.state.fail_before["bonus_pay"] == []  # the failure did happen
    assert not {p for bonus in standin.app.state.paid for p in bonus["amounts"]} & {b.pid for b in spam}
