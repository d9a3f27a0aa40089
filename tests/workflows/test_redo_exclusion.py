"""A redo of Task 1 work rejected by QA after the rounds began keeps out everyone who saw the picture.

Through the real pipeline, step by step: two workers annotate the picture in
Task 1, one's work is held for QA (flagged on gold, ``flagged_action: hold``),
the other's is approved, so Task 2's rounds start; a third worker does round
1. Then the reviewer rejects the held work (the dashboard's function): the
redo of that assignment must not go to the round's worker, who has seen the
picture, and round 2 waits for the redo, then keeps out its worker too.
"""

from __future__ import annotations

from typing import Any

import requests
import yaml
from bs4 import Tag
from sqlalchemy import select

from demo.crowd import PROFILES, Bot
from hits.db import session_scope
from hits.requester.quality import qa_review
from hits.requester.quality.outbox import apply_entries
from hits.requester.tables.campaigns import OutboxEntry, PublishedHIT, Submission
from hits.requester.tables.workflows import Chain, ChainRound
from hits.requester.workflows.engine import stages_of
from hits.requester.workflows.publish import run_step
from hits.requester.workflows.report import chain_views
from tests.quality.test_signal_flags import _reviewer
from tests.server.worker_helpers import WorkerClient, csrf_of, soup
from tests.workflows.helpers import work_until
from tests.workflows.test_refine_blinding import _sync
from tests.workflows.test_task1_redo import PERFECT, _bot, _launch, _workflow_file

NAME = "iiw-redo-seen"


def _accept(http: requests.Session, base: str, hit_id: str) -> requests.Response | None:
    """The work page the worker signed in on ``http`` gets by posting the HIT's accept; None: refused."""
    index = http.get(base + "/")
    taken = http.post(base + f"/hits/{hit_id}/accept", data={"csrf_token": csrf_of(index)})
    return taken if soup(taken).find("iframe", id="hit-frame") is not None else None


def _look_and_return(http: requests.Session, base: str, work: requests.Response) -> None:
    """Open the assignment's HIT page (the picture is shown), then return the assignment."""
    frame = soup(work).find("iframe", id="hit-frame")
    assert isinstance(frame, Tag)
    src = str(frame["src"])
    assert http.get(src if src.startswith("http") else base + src).status_code == 200
    form = soup(work).select_one('form[action$="/return"]')
    assert isinstance(form, Tag), work.text
    returned = http.post(base + str(form["action"]), data={"csrf_token": csrf_of(work)})
    assert returned.status_code == 200


def _rounds(sessions: Any, workflow_id: int) -> list[ChainRound]:
    with session_scope(sessions) as session:
        describe = stages_of(session, workflow_id)[1]
        chain = session.scalar(select(Chain).where(Chain.stage_id == describe.id))
        assert chain is not None
        return list(
            session.scalars(select(ChainRound).where(ChainRound.chain_id == chain.id).order_by(ChainRound.id))
        )


def _round_hit_id(sessions: Any, round_row: ChainRound) -> str:
    with session_scope(sessions) as session:
        published = session.get(PublishedHIT, round_row.published_hit_id)
        assert published is not None and published.mturk_hit_id
        return published.mturk_hit_id


def test_a_redo_of_task1_work_rejected_after_the_rounds_began_keeps_out_a_round_worker(
    tmp_path, live_server, market, requester_sessions
) -> None:
    truths = _workflow_file(tmp_path, "5.00", name=NAME)
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    spec["assignments_per_hit"] = 2
    spec["quality"]["flagged_action"] = "hold"  # a worker failing gold waits for a person
    spec["workflow"]["stages"][0]["rounds"] = {"max_rounds": 2, "jaccard_threshold": 0.99}
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    workflow_id, task1 = _launch(tmp_path, market, requester_sessions, live_server.url)
    hit_page, base = live_server.url + "/tasks/hit", live_server.url
    task1_title, task2_title = f"Check the objects {NAME}", f"Improve a description {NAME}"

    careful = _bot(base, "seen-careful", PERFECT, truths, task1_title)
    spammer = _bot(base, "seen-spam", PROFILES["spammer"], truths, task1_title)
    work_until([careful, spammer], lambda: careful.result.submitted == spammer.result.submitted == 1, 60)
    _sync(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        held = session.scalar(select(Submission).where(Submission.worker_id == spammer.result.worker_id))
        assert held is not None and held.decision == "held"
        held_id = held.id
        task1_hit = session.scalar(select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == task1))
    assert task1_hit is not None
    # The careful annotator's work is approved: the picture's rounds do not wait for the held work.
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1

    rounder: Bot = _bot(base, "seen-round", PERFECT, truths, task2_title)
    work_until([rounder], lambda: rounder.result.submitted == 1, 60)
    # The reviewer rejects the held Task 1 work while round 1's decision is still to be read.
    staff = _reviewer(requester_sessions, "qa-redo-seen")
    with session_scope(requester_sessions) as session:
        rejection = qa_review.decide_held(session, held_id, "reject", staff, "boxes are wrong")
    apply_entries(requester_sessions, market, rejection)
    step = run_step(requester_sessions, market, workflow_id, hit_page)
    rounds = _rounds(requester_sessions, workflow_id)
    # Round 1 is approved, but round 2 waits for the redo: its worker is not known yet.
    assert [(r.round, r.status) for r in rounds] == [(1, "approved")]
    assert rounds[0].worker_id == rounder.result.worker_id
    with session_scope(requester_sessions) as session:
        redo = session.scalar(
            select(OutboxEntry).where(OutboxEntry.campaign_id == task1, OutboxEntry.action == "repost")
        )
        assert redo is not None and redo.id in step.outbox
        excluded = set(redo.payload["exclude"][0]["workers"])
    assert {careful.result.worker_id, spammer.result.worker_id, rounder.result.worker_id} <= excluded
    # What waits is said: the picture's Task 1 redo, not "the next step of the pipeline".
    with session_scope(requester_sessions) as session:
        stages = stages_of(session, workflow_id)
        waiting = [v.waiting_on for v in chain_views(session, stages) if v.stage == stages[1].name]
    assert waiting == [f"round 1: stage {stages[1].source}'s open HIT or redo of this picture"], waiting
    apply_entries(requester_sessions, market, step.outbox)
    assert market.get_hit(task1_hit)["MaxAssignments"] == 3

    # The round's worker has seen the picture: the redo is hidden from them and refused; a newcomer gets it.
    assert rounder.http.get(base + f"/hits/{task1_hit}").status_code == 403
    assert _accept(rounder.http, base, task1_hit) is None
    newcomer = WorkerClient(base, "seen-new")
    work = _accept(newcomer.http, base, task1_hit)
    assert work is not None
    _look_and_return(newcomer.http, base, work)  # looked at the picture, then left the redo to a bot

    redoer = _bot(base, "seen-redoer", PERFECT, truths, task1_title)
    work_until([redoer], lambda: redoer.result.submitted == 1, 90)
    _sync(requester_sessions, market)
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1
    second = _rounds(requester_sessions, workflow_id)[-1]
    assert (second.round, second.status) == (2, "open")
    # Round 2 keeps out everyone who has seen the picture, the redo's worker and the newcomer included.
    round2 = _round_hit_id(requester_sessions, second)
    for seen in (careful, spammer, rounder, redoer):
        assert seen.http.get(base + f"/hits/{round2}").status_code == 403
    assert newcomer.get(f"/hits/{round2}").status_code == 403
    assert WorkerClient(base, "seen-fresh").get(f"/hits/{round2}").status_code == 200


def test_a_round_rejected_by_qa_is_redone_by_nobody_who_saw_the_picture_in_any_stage(
    tmp_path, live_server, market, requester_sessions
) -> None:
    name = "iiw-round-redo-seen"
    truths = _workflow_file(tmp_path, "5.00", name=name)
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    # A round whose text fails the checks waits for a person.
    spec["workflow"]["stages"][0]["quality"] = {"flagged_action": "hold"}
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    workflow_id, _task1 = _launch(tmp_path, market, requester_sessions, live_server.url)
    hit_page, base = live_server.url + "/tasks/hit", live_server.url

    annotator = _bot(base, "rr-annotator", PERFECT, truths, f"Check the objects {name}")
    work_until([annotator], lambda: annotator.result.submitted == 1, 60)
    _sync(requester_sessions, market)
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1
    spammer = _bot(base, "rr-spam", PROFILES["spammer"], truths, f"Improve a description {name}")
    work_until([spammer], lambda: spammer.result.submitted == 1, 60)
    run_step(requester_sessions, market, workflow_id, hit_page)  # syncs the round: held for QA
    [first] = _rounds(requester_sessions, workflow_id)
    assert (first.status, first.worker_id) == ("held", spammer.result.worker_id)
    staff = _reviewer(requester_sessions, "qa-round-redo-seen")
    with session_scope(requester_sessions) as session:
        held = session.scalar(select(Submission.id).where(Submission.assignment_id == first.assignment_id))
        assert held is not None
        rejection = qa_review.decide_held(session, held, "reject", staff, "nonsense")
    apply_entries(requester_sessions, market, rejection)
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1
    rounds = _rounds(requester_sessions, workflow_id)
    assert [(r.round, r.attempt, r.status) for r in rounds] == [(1, 1, "rejected"), (1, 2, "open")]
    redo = _round_hit_id(requester_sessions, rounds[1])
    # The Task 1 annotator and the rejected round's worker have both seen the picture.
    for seen in (annotator, spammer):
        assert seen.http.get(base + f"/hits/{redo}").status_code == 403
        assert _accept(seen.http, base, redo) is None
    assert _accept(WorkerClient(base, "rr-fresh").http, base, redo) is not None
