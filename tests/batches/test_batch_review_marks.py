"""``hitforge batch review`` decides only the batch's own work, once: an assignment of another
batch is refused, and a CSV mark is the submission's decision, which the pipeline never contradicts."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.batches.plan import batch_settings, planned_cost
from hits.requester.batches.publish import publish_batch
from hits.requester.quality.followups import OverBudget, check_budget, committed_cost
from hits.requester.tables.batches import Batch
from hits.requester.tables.campaigns import Campaign, OutboxEntry
from server.cli.main import main
from tests.batches.test_batch_cli import cli_env
from tests.batches.test_batch_flow import hit_ids, make_batch, work
from tests.batches.test_batch_gold import accept_and_post, make
from tests.batches.test_batch_gold_pipeline import CSV, RIGHT, WRONG, gold_batch
from tests.helpers import sync_marketplace_answers
from tests.server.worker_helpers import WorkerClient


def marks_file(path: Path, lines: list[tuple[str, str, str, str]]) -> str:
    """A reviewed results file cut down to the columns the review reads."""
    rows = ["HITId,AssignmentId,Approve,Reject", *(",".join(line) for line in lines)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


def batch_name(requester_sessions, batch_id: int) -> str:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        batch = session.get(Batch, batch_id)
        assert batch is not None
        return batch.name


def entries_for(requester_sessions, targets: list[str]) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        rows = session.execute(
            select(OutboxEntry.target, OutboxEntry.action)
            .where(OutboxEntry.target.in_(targets))
            .order_by(OutboxEntry.target, OutboxEntry.action)
        )
        return [(str(t), str(a)) for t, a in rows]


def sync_pass(mturk, market, requester_sessions, hits: list[str]) -> None:  # type: ignore[no-untyped-def]
    """The Celery sync's work done inline (the answers it returns are not needed here)."""
    sync_marketplace_answers(mturk, market, requester_sessions, hits)


def test_a_mark_on_another_batchs_assignment_is_refused_and_nothing_of_the_file_applies(
    live_server, settings, requester, market, mturk, requester_sessions, tmp_path
) -> None:
    env = cli_env(settings, requester)
    (tmp_path / "other").mkdir()
    mine, theirs = make_batch(requester_sessions, tmp_path), make(requester_sessions, tmp_path / "other")
    for batch_id in (mine, theirs):
        publish_batch(requester_sessions, market, batch_id)
    my_hits, their_hits = hit_ids(requester_sessions, mine), hit_ids(requester_sessions, theirs)
    alice = WorkerClient(live_server.url, "alice")
    own = work(alice, my_hits[0], "A cat, asleep", ["cat"])
    foreign = accept_and_post(alice, their_hits[0], {"count": "1", "animal": "cow"})
    # This batch's HIT with the other batch's assignment on line 3, and a made-up one on line 4.
    path = marks_file(
        tmp_path / "edited.csv",
        [
            (my_hits[0], own, "x", ""),
            (my_hits[0], foreign, "", "Bad"),
            (my_hits[1], "NOSUCHASSIGNMENT", "x", ""),
        ],
    )
    refused = CliRunner().invoke(
        main, ["batch", "review", batch_name(requester_sessions, mine), path], env=env
    )
    assert refused.exit_code == 2, (refused.output, refused.exc_info)
    assert (
        f"edited.csv, line 3, field 'AssignmentId': assignment {foreign} is not work handed in for "
        f"HIT {my_hits[0]}" in refused.output
    )
    assert "edited.csv, line 4, field 'AssignmentId': assignment NOSUCHASSIGNMENT is not" in refused.output
    # Nothing of the file: no outbox key of the other batch's work used up, its own line not applied.
    assert entries_for(requester_sessions, [own, foreign, "NOSUCHASSIGNMENT"]) == []
    statuses = [
        mturk.get_assignment(AssignmentId=a)["Assignment"]["AssignmentStatus"] for a in (own, foreign)
    ]
    assert statuses == ["Submitted", "Submitted"]


def test_a_csv_reject_is_the_decision_the_pipeline_keeps_and_a_second_hand_in_queues_nothing(
    live_server, settings, requester, market, mturk, requester_sessions, tmp_path
) -> None:
    env = cli_env(settings, requester)
    batch_id, hits = gold_batch(market, requester_sessions, tmp_path)
    good, bad = WorkerClient(live_server.url, "careful"), WorkerClient(live_server.url, "sloppy")
    # The first HIT (no gold): both workers' work is synced and graded, nobody can be judged yet;
    # the HIT is then finished, so its work is not read again.
    first = {w.worker_id: accept_and_post(w, hits[0], a[0]) for w, a in ((good, RIGHT), (bad, WRONG))}
    sync_pass(mturk, market, requester_sessions, hits)
    assert entries_for(requester_sessions, list(first.values())) == []
    # The requester rejects both in the results file.
    path = marks_file(
        tmp_path / "results.csv",
        [(hits[0], first[w.worker_id], "", "Not what was asked.") for w in (good, bad)],
    )
    name = batch_name(requester_sessions, batch_id)
    reviewed = CliRunner().invoke(main, ["batch", "review", name, path], env=env)
    assert reviewed.exit_code == 0 and "2 marks: 2 applied now" in reviewed.output, reviewed.output
    # Their other work makes the pipeline confident: the careful worker approved, the sloppy rejected.
    for who, answers in ((good, RIGHT), (bad, WRONG)):
        for i, hit in enumerate(hits[1:], start=1):
            accept_and_post(who, hit, answers[i])
    sync_pass(
        mturk, market, requester_sessions, hits
    )  # neither a contradicting approve nor a clashing reject
    targets = list(first.values())
    assert entries_for(requester_sessions, targets) == sorted((a, "reject") for a in targets)
    again = CliRunner().invoke(main, ["batch", "review", name, path], env=env)
    assert again.exit_code == 0 and "2 marks: 0 applied now, 2 applied before" in again.output, again.output
    assert entries_for(requester_sessions, targets) == sorted((a, "reject") for a in targets)
    statuses = [mturk.get_assignment(AssignmentId=a)["Assignment"]["AssignmentStatus"] for a in targets]
    assert statuses == ["Rejected", "Rejected"]


def test_the_pipeline_leaves_alone_work_whose_decision_is_queued_already(
    live_server, market, mturk, requester_sessions, tmp_path
) -> None:
    batch_id, hits = gold_batch(market, requester_sessions, tmp_path)
    good, bad = WorkerClient(live_server.url, "careful"), WorkerClient(live_server.url, "sloppy")
    done = {
        (w.worker_id, i): accept_and_post(w, hit, answers[i])
        for w, answers in ((good, RIGHT), (bad, WRONG))
        for i, hit in enumerate(hits)
    }
    targets = [done[(good.worker_id, 0)], done[(bad.worker_id, 0)]]
    # Rejections queued before the work was first synced (a results file handed in by an
    # older hitforge, which did not record the decision on the submission).
    with session_scope(requester_sessions) as session:
        campaign = session.get(Batch, batch_id)
        assert campaign is not None
        for target in targets:
            session.add(
                OutboxEntry(campaign_id=campaign.campaign_id, action="reject", target=target, payload={})
            )
    sync_pass(mturk, market, requester_sessions, hits)  # no IntegrityError, no approve of the rejected work
    assert entries_for(requester_sessions, targets) == sorted((a, "reject") for a in targets)
    others = [a for (w, i), a in done.items() if i > 0]
    assert sorted(t for t, _ in entries_for(requester_sessions, others)) == sorted(others)  # one each


def test_a_batch_of_more_than_a_hundred_assignments_a_hit_commits_them_all(
    requester_sessions, tmp_path
) -> None:
    # No budget given: the batch's budget is exactly what its HITs cost, every assignment counted.
    batch_id = make(requester_sessions, tmp_path, csv=CSV, assignments=150)
    with session_scope(requester_sessions) as session:
        batch = session.get(Batch, batch_id)
        assert batch is not None
        campaign = session.get(Campaign, batch.campaign_id)
        assert campaign is not None
        assert committed_cost(session, campaign) == campaign.budget == planned_cost(batch_settings(batch), 4)
        with pytest.raises(OverBudget, match="committed"):
            check_budget(session, campaign, Decimal("0.01"), "a bonus")
