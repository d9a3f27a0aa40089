"""``hitforge demo --template iiw``: the chained workflow with the simulated crowd, as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.celery


def test_the_iiw_demo_runs_every_picture_to_its_end(tmp_path) -> None:
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "demo", "--template", "iiw", "--hits", "3"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "COLUMNS": "120"},
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    said = " ".join(result.stdout.split())  # rich wraps long lines at the terminal's width
    assert "converged or reached the round limit" in said and "no worker saw a picture twice" in said
    assert "Task 2 over rounds" in result.stdout
    # With the objects template installed, Task 1 comes first and feeds Task 2.
    assert "Task 1 (objects) then Task 2 (refine)" in result.stdout
    assert "Task 1 assignments per bot profile" in result.stdout
    assert (tmp_path / "var" / "demo" / "campaign" / "seeds.jsonl").exists()
    _task2_started_from_task1(tmp_path / "var" / "demo" / "requester.sqlite")


def _task2_started_from_task1(database: Path) -> None:
    """Every Task 2 picture began from the seeder's caption and Task 1's approved descriptions."""
    from sqlalchemy import select

    from hits.db import make_engine, make_session_factory, session_scope
    from hits.requester.tables.campaigns import HITSlot, Item, PublishedHIT, Submission
    from hits.requester.tables.workflows import Chain, WorkflowStage

    with session_scope(make_session_factory(make_engine(f"sqlite:///{database}"))) as session:
        task1 = session.scalar(select(WorkflowStage).where(WorkflowStage.name == "objects"))
        assert task1 is not None
        approved: dict[str, list[list[dict]]] = {}
        for key, position, answers in session.execute(
            select(Item.external_id, HITSlot.position, Submission.answers)
            .join(HITSlot, HITSlot.item_id == Item.id)
            .join(Submission, Submission.published_hit_id == HITSlot.published_hit_id)
            .where(Item.campaign_id == task1.campaign_id, Submission.decision == "approve")
            .order_by(Submission.id)
        ).all():
            approved.setdefault(key, []).append(answers["answers"][position])
        chains = session.scalars(
            select(Chain)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(WorkflowStage.name == "describe")
        ).all()
        assert session.scalar(select(PublishedHIT.id).where(PublishedHIT.campaign_id == task1.campaign_id))
    started = [c for c in chains if c.seed_text is not None]
    assert started and all(c.seed_source == "seeder file + upstream stage" for c in started)
    for chain in started:
        triples = approved[chain.key][0]  # the earliest approved Task 1 answer for the picture
        assert isinstance(triples, list) and triples
        assert str(chain.seed_text).startswith("Coloured shapes on a light background.")
        for triple in triples:
            assert set(triple) == {"label", "box", "description"} and len(triple["box"]) == 4
            assert triple["description"].strip().rstrip(".").casefold() in str(chain.seed_text).casefold()
