"""A backup taken mid-campaign, restored into fresh databases: the campaign finishes, nothing is paid twice.

The worst moment is built on purpose where the two halves have databases of
their own (the embedded default): the requester side is saved while four
submissions wait to be decided, the worker then decides and applies them, and
only then is the marketplace saved. The restored requester side decides them
again and sends the decisions again; the restored marketplace, which has them
already, must answer idempotently and pay each assignment once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from sqlalchemy import func, select

from demo.crowd import Profile
from demo.data import write_rating_demo
from demo.runner import free_port, serve_in_thread, spawn_worker, stop_process
from hits.backup import back_up_side, database_sides, write_manifest
from hits.db import make_engine, make_session_factory, session_scope
from hits.settings import load_settings
from server import create_app
from tests.deploy.test_stack import _environment, _wait
from tests.helpers import campaign_bot, rating_campaign_spec

pytestmark = [pytest.mark.celery, pytest.mark.timeout(300)]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _fresh(tmp_path: Path, name: str, port: int) -> dict[str, str]:
    env = _environment(tmp_path / name, port)
    (tmp_path / name).mkdir()
    return {key: value for key, value in env.items() if value != "" or key.startswith("HITFORGE_MTURK")}


def _decided(env: dict[str, str]) -> list[tuple[str | None, str | None]]:
    """Each submission's decision and who made it, as the requester side records them."""
    from hits.requester.tables.campaigns import Submission

    settings = load_settings(env)
    with session_scope(make_session_factory(make_engine(settings.database_url))) as session:
        return [
            (decision, (evidence or {}).get("decided_by"))
            for decision, evidence in session.execute(
                select(Submission.decision, Submission.evidence).order_by(Submission.id)
            )
        ]


def _outbox(env: dict[str, str]) -> Counter[str]:
    from hits.requester.tables.campaigns import OutboxEntry

    settings = load_settings(env)
    with session_scope(make_session_factory(make_engine(settings.database_url))) as session:
        return Counter(
            dict(
                session.execute(
                    select(OutboxEntry.status, func.count())
                    .where(OutboxEntry.action.in_(("approve", "reject")))
                    .group_by(OutboxEntry.status)
                ).all()
            )
        )


def test_a_backup_mid_campaign_restores_and_the_campaign_finishes_paying_each_assignment_once(
    tmp_path: Path,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    before = _fresh(tmp_path, "before", port)
    assert _cli(before, "db", "upgrade").returncode == 0
    made = _cli(before, "requester", "create", "backup-lab", "--deposit", "20.00")
    keys = dict(line.split("=", 1) for line in made.stdout.splitlines() if line.startswith("HITFORGE_MTURK_"))
    before.update(keys)
    settings = load_settings(before)
    folder = tmp_path / "campaign"
    folder.mkdir()
    truth = write_rating_demo(folder, items=8, gold=4, seed=5)
    # Gold alone: with two workers, the worker model's consensus for each is the other one, and
    # when each is judged decides approve or hold (see test_stack). This test is about the restore.
    gold_alone = {"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2, "worker_model": False}
    spec = rating_campaign_spec("kept", assignments_per_hit=2, quality=gold_alone)
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec))
    logs = [tmp_path / "worker-before.log", tmp_path / "worker-after.log"]

    server = serve_in_thread(create_app(settings=settings), port=port)
    try:
        launched = _cli(before, "launch", str(folder / "campaign.yaml"))
        assert launched.returncode == 0, launched.stdout + launched.stderr
        good = campaign_bot(url, "kept-good", Profile("perfect", 1.0), truth, "kept")
        bad = campaign_bot(url, "kept-bad", Profile("always-off", 0.0), truth, "kept")
        assert good.run(max_hits=2).submitted + bad.run(max_hits=2).submitted == 4

        backup = tmp_path / "backup"
        backup.mkdir()
        sides = dict(database_sides(settings))
        split = "requester" in sides
        saved = []
        if split:  # the requester side now, before anything is decided
            saved.append(back_up_side("requester", sides["requester"], backup))
        worker = spawn_worker(before, logs[0])
        try:
            _wait(lambda: _outbox(before)["done"] == 4, 120, "the first four are applied", logs)
            if split:  # the marketplace now: it has the four decisions the requester's copy lacks
                saved.append(back_up_side("market", sides["market"], backup))
                write_manifest(backup, saved)
            else:  # one database for both halves: one snapshot, taken while the worker runs
                taken = _cli(before, "db", "backup", str(backup))
                assert taken.returncode == 0, taken.stdout + taken.stderr
        finally:
            stop_process(worker)
    finally:
        server.stop()

    # The same deployment on new, empty databases (same secret, same address, same keys).
    after = {**_fresh(tmp_path, "after", port), **keys, "HITFORGE_SECRET_KEY": before["HITFORGE_SECRET_KEY"]}
    restored = _cli(after, "db", "restore", str(backup))
    assert restored.returncode == 0, restored.stdout + restored.stderr
    again = _cli(after, "db", "restore", str(backup))
    assert again.returncode == 1 and "already has tables" in again.stdout
    assert _cli(after, "db", "upgrade").returncode == 0
    if split:
        assert _outbox(after)["done"] == 0  # the requester's copy: taken before any decision

    server = serve_in_thread(create_app(settings=load_settings(after)), port=port)
    worker = spawn_worker(after, logs[1])
    try:
        good = campaign_bot(url, "kept-good", Profile("perfect", 1.0), truth, "kept")
        bad = campaign_bot(url, "kept-bad", Profile("always-off", 0.0), truth, "kept")
        assert good.run(max_hits=2).submitted + bad.run(max_hits=2).submitted == 4
        _wait(
            lambda: (
                len(_decided(after)) == 8
                and all(decision for decision, _ in _decided(after))
                and set(_outbox(after)) == {"done"}
            ),
            150,
            "all eight are decided and every decision applied",
            logs,
        )
    finally:
        stop_process(worker)
        server.stop()
    assert "Traceback" not in logs[1].read_text(errors="replace")
    if split:
        # The four the restored requester side had not seen decided: found decided on the marketplace
        # (recorded as such, not decided or sent again); the four after the restore: its own.
        decided = _decided(after)
        assert [by for _, by in decided[:4]] == ["marketplace"] * 4, decided
        assert all(by is None for _, by in decided[4:]), decided

    # The restored marketplace paid each approved assignment once, and nobody more than that.
    from hits.market.models.ledger import LedgerEntry
    from hits.market.models.work import Assignment

    market = make_session_factory(make_engine(load_settings(after).market_database_url))
    with session_scope(market) as session:
        statuses = Counter(session.scalars(select(Assignment.status)).all())
        rewards = session.execute(
            select(LedgerEntry.txn, func.count())
            .where(LedgerEntry.txn.like("reward:%"), LedgerEntry.account.like("worker:%"))
            .group_by(LedgerEntry.txn)
        ).all()
        paid = session.scalar(
            select(func.sum(LedgerEntry.amount)).where(
                LedgerEntry.txn.like("reward:%"), LedgerEntry.account.like("worker:%")
            )
        )
    assert statuses == {"Approved": 4, "Rejected": 4}, statuses
    assert len(rewards) == 4 and all(count == 1 for _, count in rewards), rewards
    assert paid == Decimal("0.40")
