"""The simulated crowd works a layout batch through the worker site over HTTP, a real Celery
worker reviews it, ``hitforge batch results`` writes the CSV and pandas reads it back with
MTurk's column names; the spammers are caught by the gold rows."""

from __future__ import annotations

import random
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
from click.testing import CliRunner
from sqlalchemy import select

from demo.crowd import PROFILES
from demo.crowd.layout_bot import LayoutBot
from demo.runner import spawn_worker, stop_process
from hits.db import session_scope
from hits.requester.batches.columns import LEADING_COLUMNS
from hits.requester.batches.publish import publish_batch
from hits.requester.tables.batches import Batch
from hits.requester.tables.campaigns import OutboxEntry, PublishedHIT, WorkerStats
from server.cli.main import main
from tests.batches.test_batch_cli import cli_env
from tests.batches.test_batch_gold import make
from tests.workers.test_review_pipeline import wait_for, worker_env

LAYOUT = """<h3>${title}</h3>
<img src="${image_url}" alt="A photo">
<p>Which animal is in the photo?
<label><input type="radio" name="animal" value="cat"> cat</label>
<label><input type="radio" name="animal" value="dog"> dog</label>
<label><input type="radio" name="animal" value="bird"> bird</label></p>
<p><label>How many? <select name="count"><option value="">choose</option>
<option>1</option><option>2</option><option>3</option><option>4</option></select></label></p>
<p><label><input type="checkbox" name="tags" value="indoors"> indoors</label>
<label><input type="checkbox" name="tags" value="blurry"> blurry</label></p>
<p><label>Anything else? <textarea name="comment"></textarea></label></p>
"""
ROWS = 16
CROWD = {"diligent": 3, "careless": 1, "spammer": 2, "copycat": 1, "late_spammer": 1}


def truth_and_csv(seed: int = 7) -> tuple[dict[str, dict[str, str]], str]:
    """Rows with a true animal and count each; every other row is gold (its expected answers)."""
    rng = random.Random(seed)
    truth, lines = {}, ["title,image_url,Gold.animal,Gold.count"]
    for i in range(ROWS):
        url = f"https://example.org/photos/{i:03d}.jpg"
        animal, count = rng.choice(["cat", "dog", "bird"]), str(rng.randint(1, 4))
        truth[url] = {"animal": animal, "count": count, "tags": "indoors", "comment": "a nice photo"}
        gold = f"{animal},{count}" if i % 2 else ","
        lines.append(f"Photo {i + 1},{url},{gold}")
    return truth, "\n".join(lines) + "\n"


def bots(base: str, truth: dict[str, dict[str, str]], title: str) -> list[LayoutBot]:
    crowd = []
    for profile, count in CROWD.items():
        for n in range(count):
            if profile == "late_spammer":
                bot = LayoutBot(
                    base,
                    f"{profile}-{n}-{uuid.uuid4().hex[:6]}",
                    PROFILES["diligent"],
                    truth,
                    seed=n,
                    turn_after=8,
                )
            else:
                bot = LayoutBot(
                    base, f"{profile}-{n}-{uuid.uuid4().hex[:6]}", PROFILES[profile], truth, seed=n
                )
            bot.title_filter = title
            crowd.append(bot)
    return crowd


def unfinished(requester_sessions: Any, campaign_id: int) -> tuple[list[Any], list[Any]]:
    """The campaign's HITs not complete (id, status) and its outbox entries not done."""
    with session_scope(requester_sessions) as session:
        hits = session.scalars(
            select(PublishedHIT).where(
                PublishedHIT.campaign_id == campaign_id, PublishedHIT.status != "complete"
            )
        ).all()
        entries = session.scalars(
            select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id, OutboxEntry.status != "done")
        ).all()
        return (
            [(h.mturk_hit_id, h.status) for h in hits],
            [(e.id, e.action, e.status, e.attempts, e.last_error) for e in entries],
        )


def waiting_on(requester_sessions, campaign_id: int, tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    """What a timed-out wait was still waiting for (:func:`unfinished`), and the end of the worker's log."""
    open_hits, pending = unfinished(requester_sessions, campaign_id)
    log = (tmp_path / "celery.log").read_text(errors="replace")
    return f"HITs not complete: {open_hits}\noutbox not done: {pending}\nworker log:\n{log[-6000:]}"


def test_the_simulated_crowd_works_a_batch_and_gold_rows_catch_the_spammers(
    tmp_path: Path, settings, live_server, requester, market, requester_sessions
) -> None:
    truth, csv = truth_and_csv()
    title = f"Animals {uuid.uuid4().hex[:6]}"
    batch_id = make(
        requester_sessions,
        tmp_path,
        csv=csv,
        layout=LAYOUT,
        title=title,
        assignments=sum(CROWD.values()),
        quality={"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 3},
    )
    publish_batch(requester_sessions, market, batch_id)
    crowd = bots(live_server.url, truth, title)
    process = spawn_worker(worker_env(settings, requester), tmp_path / "celery.log")
    try:
        # Everyone at once, as a crowd is: each bot takes HITs until none is left for it.
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda b: b.run(max_hits=ROWS), crowd))
        assert all(not r.errors for r in results), [r.errors for r in results]
        assert [r.submitted for r in results] == [ROWS] * len(crowd)
        with session_scope(requester_sessions) as session:
            campaign_id = session.get(Batch, batch_id).campaign_id  # type: ignore[union-attr]

        def reviewed() -> bool:
            return unfinished(requester_sessions, campaign_id) == ([], [])

        try:
            wait_for(reviewed, timeout=180)
        except AssertionError:
            raise AssertionError(waiting_on(requester_sessions, campaign_id, tmp_path)) from None
    finally:
        stop_process(process)
    log = (tmp_path / "celery.log").read_text()
    assert "Traceback" not in log, log[-3000:]

    # The requester downloads the results as on MTurk and reads them with pandas.
    with session_scope(requester_sessions) as session:
        name = session.get(Batch, batch_id).name  # type: ignore[union-attr]
    out = tmp_path / "results.csv"
    written = CliRunner().invoke(
        main, ["batch", "results", name, "--out", str(out)], env=cli_env(settings, requester)
    )
    assert written.exit_code == 0, written.output
    frame = pd.read_csv(out, keep_default_na=False, dtype=str)
    assert list(frame.columns) == [
        *LEADING_COLUMNS,
        "Input.title",
        "Input.image_url",
        "Answer.animal",
        "Answer.comment",
        "Answer.count",
        "Answer.tags",
        "Approve",
        "Reject",
    ]
    assert len(frame) == ROWS * len(crowd)
    profile_of = {
        r.worker_id: r.profile if b.turn_after is None else "late_spammer"
        for b, r in zip(crowd, results, strict=True)
    }
    frame["profile"] = frame["WorkerId"].map(profile_of)
    status = frame.groupby("profile")["AssignmentStatus"].agg(lambda s: sorted(set(s)))
    with session_scope(requester_sessions) as session:
        stats = {
            s.worker_id: s
            for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
        }
    flagged = {p: sorted(stats[w].flagged for w in profile_of if profile_of[w] == p) for p in CROWD}
    # Caught through the gold rows: both spammers flagged and their work rejected; no diligent
    # worker flagged, their work approved.
    assert flagged["spammer"] == [True, True] and status["spammer"] == ["Rejected"]
    assert flagged["copycat"] == [True] and status["copycat"] == ["Rejected"]
    # No diligent worker is flagged or rejected; one whose gold is not yet convincing (6 of 8
    # right is not P > 0.9 of accuracy above 0.6) waits, undecided, as the policy says.
    assert flagged["diligent"] == [False] * 3 and "Rejected" not in status["diligent"]
    assert "Approved" in status["diligent"]
    assert all(stats[w].gold_total == ROWS // 2 for w in profile_of)
    # The diligent answers read back as posted: a gold row's expected values among them.
    diligent = frame[frame["profile"] == "diligent"]
    right = (
        diligent["Answer.animal"] == diligent["Input.image_url"].map(lambda u: truth[u]["animal"])
    ).mean()
    assert right > 0.8
    figures = {
        p: [(stats[w].gold_correct, stats[w].gold_total, status[p]) for w in profile_of if profile_of[w] == p]
        for p in CROWD
    }
    print(figures, flagged)  # the figures the report quotes (run with -s)
