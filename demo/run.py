"""``hitforge demo``: one whole campaign on the embedded default, with a simulated crowd."""

from __future__ import annotations

import logging
import secrets
import shutil
import socket
import threading
import time
from collections import defaultdict
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from sqlalchemy import func, select
from werkzeug.security import generate_password_hash

from demo import iiw
from demo import recruit as recruit_demo
from demo.context import DemoContext
from demo.crowd import PROFILES, Bot, BotResult
from demo.runner import (
    RunningServer,
    deferred_interrupts,
    serve_in_thread,
    sigterm_interrupts,
    spawn_worker,
    stop_process,
)
from demo.tasks import DemoTask, Truth, get_demo_task
from hits.db import make_engine, make_session_factory, session_scope
from hits.market.accounts import create_requester
from hits.requester.campaigns.service import create_campaign, publish_campaign
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.campaigns import (
    Campaign,
    OutboxEntry,
    PublishedHIT,
    StaffUser,
    Submission,
    WorkerStats,
)
from hits.schema import upgrade
from hits.settings import load_settings, var_dir_of
from server import create_app

CROWD = [("diligent", 4), ("careless", 3), ("spammer", 3)]
ASSIGNMENTS = 3
#: The demo gives up once neither a submission nor a decision has come for this long. There is no
#: limit on the whole run: a loaded machine makes the crowd and Celery slow, not stuck (a fixed
#: 100 s made the 12-HIT heatmap demo give up with work still coming in).
STALL_SECONDS = 120.0
#: The file that marks a folder as the demo's own: a demo replaces only such a folder.
MARKER = ".hitforge-demo"


def write_campaign(folder: Path, task: DemoTask, hit_count: int, *, recruit: bool = False) -> Truth:
    """The demo's campaign file, items, gold and images; returns the truth for the crowd.

    ``recruit``: the crowd comes from Prolific (the stand-in), with a bonus Prolific pays.
    """
    items = hit_count * task.items_per_hit
    # A gold item for every gold slot of every HIT: a worker taking several HITs never meets one twice.
    gold = max(10, hit_count * task.gold_per_hit) if task.gold_per_hit else 0
    truth = task.write_data(folder, items, gold, 11)
    spec: dict[str, Any] = {
        "name": f"demo-{task.template}",
        "template": task.template,
        "title": task.title,
        "description": task.description,
        "keywords": task.keywords,
        "reward": "0.10",
        "budget": "50.00",
        "assignments_per_hit": ASSIGNMENTS,
        "items_per_hit": task.items_per_hit,
        "lifetime_seconds": 3600,
        "assignment_duration_seconds": 600,
        "auto_approval_delay_seconds": 86400,
        "items": "items.jsonl",
        "media_dir": "media",
        "template_options": task.template_options,
        "quality": task.quality,
        "seed": 11,
    }
    if task.gold_per_hit:
        spec.update(gold_per_hit=task.gold_per_hit, gold="gold.jsonl")
    if recruit:
        spec["recruit"] = recruit_demo.recruit_section(task.title)
        spec["quality"] = {**task.quality, "bonus": recruit_demo.bonus_rule()}
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return truth


def demo_folder(env: Mapping[str, str] | None = None) -> Path:
    """Where the demo keeps its databases and files: ``demo/`` in the var folder (``HITFORGE_VAR_DIR``)."""
    return var_dir_of(env) / "demo"


def _replaceable(folder: Path) -> bool:
    """Whether ``folder`` may be removed for a new demo: absent, empty, or a demo's own.

    An older demo left no marker; its two databases say what it was.
    """
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        return False
    names = {path.name for path in folder.iterdir()} if folder.exists() else set()
    return not names or MARKER in names or {"requester.sqlite", "market.sqlite"} <= names


def run_demo(
    console: Console,
    *,
    keep_serving: bool,
    template: str,
    port: int,
    hit_count: int,
    recruit: str | None = None,
) -> int:
    """Run one demo in ``demo/`` of the var folder; the exit status.

    SIGTERM ends it as Ctrl-C does: the Celery worker and the server are
    stopped on every way out, ``--keep-serving`` included.
    """
    with sigterm_interrupts():
        return _run_demo(
            console,
            keep_serving=keep_serving,
            template=template,
            port=port,
            hit_count=hit_count,
            recruit=recruit,
        )


def _run_demo(
    console: Console, *, keep_serving: bool, template: str, port: int, hit_count: int, recruit: str | None
) -> int:
    started = time.monotonic()
    var_dir = demo_folder()
    try:
        # Bound now, served once the databases are ready: a port merely seen free here could be
        # taken by any other process during the migrations, and the demo would then fail to serve.
        listening = socket.create_server(("127.0.0.1", port))
    except OSError as exc:  # before the last demo's files are removed: a refused run loses nothing
        console.print(f"[red]error:[/red] cannot listen on 127.0.0.1:{port}: {exc.strerror}", highlight=False)
        return 2
    if not _replaceable(var_dir):
        listening.close()
        console.print(
            f"[red]error:[/red] {var_dir} was not made by hitforge demo, which replaces its folder on "
            "each run: move it away, or set HITFORGE_VAR_DIR to another folder",
            highlight=False,
        )
        return 2
    shutil.rmtree(var_dir, ignore_errors=True)
    var_dir.mkdir(parents=True)
    (var_dir / MARKER).write_text("hitforge demo's folder: the next `hitforge demo` replaces it\n")
    url = f"http://127.0.0.1:{listening.getsockname()[1]}"
    base_env = {"HITFORGE_VAR_DIR": str(var_dir), "HITFORGE_PUBLIC_URL": url}
    # Prolific is played by a stand-in served in process; server, worker and beat all talk to it.
    standin = recruit_demo.start_standin() if recruit else None
    if standin is not None:
        base_env.update(recruit_demo.settings_env(standin))
        console.print(f"Prolific STAND-IN (not Prolific) at {standin.api_url}", highlight=False)
    settings = load_settings(base_env)
    console.print(
        f"[bold]hitforge demo[/bold]: embedded default under {var_dir}; to serve at {url}", highlight=False
    )
    upgrade(settings)

    market_sessions = make_session_factory(make_engine(settings.market_database_url))
    with session_scope(market_sessions) as session:
        key = create_requester(session, "demo-requester", Decimal("100.00"))
    staff_password = secrets.token_urlsafe(9)
    requester_sessions = make_session_factory(make_engine(settings.database_url))
    with session_scope(requester_sessions) as session:
        # The demo requester's own dashboard user: it sees the campaigns published with the demo's key.
        session.add(
            StaffUser(
                username="qa",
                password_hash=generate_password_hash(staff_password),
                role="requester",
                access_key_id=key.access_key_id,
            )
        )

    worker_env = {
        **base_env,
        # The demo runs on the embedded default whatever this shell's settings
        # say; the worker must not take another database from the environment.
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_BROKER_URL": settings.broker_url,
        "HITFORGE_MTURK_ENDPOINT_URL": settings.public_url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": key.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": key.secret_access_key,
        "HITFORGE_SYNC_INTERVAL": "1.0",
    }
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server: RunningServer | None = None
    worker = None
    try:
        # An interrupt while they start waits until they are known to the `finally` that stops them.
        with deferred_interrupts():
            with listening:  # the server serves on its own duplicate of the socket
                server = serve_in_thread(create_app(settings=settings), fd=listening.fileno())
            worker = spawn_worker(worker_env, var_dir / "celery.log")
        console.print(
            f"server at {server.url}; Celery worker pid {worker.pid} (log: {var_dir / 'celery.log'})"
        )
        # The iiw demo is a workflow of two tasks, not one campaign (demo/iiw.py).
        body = iiw.run if template == iiw.NAME else _run
        demo = DemoContext(
            console=console,
            key=key,
            url=server.url,
            var_dir=var_dir,
            template=template,
            hit_count=hit_count,
            sessions=requester_sessions,
            keep_serving=keep_serving,
            staff_password=staff_password,
            started=started,
            standin=standin,
        )
        return body(demo)
    finally:
        # Every way out, --keep-serving's too (its serving ends with Ctrl-C or SIGTERM): the worker
        # runs in a session of its own, so nothing else would stop it.
        with deferred_interrupts():
            if worker is not None:
                stop_process(worker)
            if server is not None:
                server.stop()
            if standin is not None:
                standin.stop()


def _run(demo: DemoContext) -> int:
    """Write, launch and crowd-source the demo campaign; print its summary; 0 when the outcome is right."""
    console, url, sessions, hit_count = demo.console, demo.url, demo.sessions, demo.hit_count
    market = demo.connect()
    balance_before = market.balance()
    task = get_demo_task(demo.template)
    standin = demo.standin
    truth = write_campaign(demo.folder, task, hit_count, recruit=standin is not None)
    loaded = load_campaign_file(demo.folder / "campaign.yaml")
    with session_scope(sessions) as session:
        campaign_id = create_campaign(session, loaded).id
    total_assignments = hit_count * ASSIGNMENTS
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        publishing = progress.add_task("publishing HITs via boto3", total=hit_count)
        publish_campaign(
            sessions,
            market,
            campaign_id,
            url + "/tasks/hit",
            progress=lambda done, total: progress.update(publishing, completed=done),
        )
        submitted = progress.add_task("crowd submitting", total=total_assignments)
        decided = progress.add_task("reviewed by Celery", total=total_assignments)
        lock = threading.Lock()
        submissions = [0]

        def on_submit() -> None:
            with lock:
                progress.advance(submitted)
                submissions[0] += 1

        settler = None
        if standin is None:
            bots = [
                Bot(url, f"{profile}-{i + 1}", PROFILES[profile], truth, seed=i, fill_form=task.fill_form)
                for profile, count in CROWD
                for i in range(count)
            ]
        else:
            # One participant a place, entering by the study's link instead of signing up.
            study_id, places = recruit_demo.launch(sessions, standin, campaign_id, url)
            console.print(f"Prolific study {study_id} created and published ({places} places)")
            bots = recruit_demo.participants(url, standin, study_id, places, truth, task.fill_form)
            settler = recruit_demo.Settler(sessions, standin, campaign_id)
            settler.start()
        results: list[BotResult] = []
        threads = [
            threading.Thread(target=lambda b=bot: results.append(b.run(hit_count, on_submit)), daemon=True)
            for bot in bots
        ]
        for thread in threads:
            thread.start()
        moved_at, seen = time.monotonic(), (0, 0)
        while time.monotonic() - moved_at < STALL_SECONDS:
            done = _decided_count(sessions, campaign_id)
            progress.update(decided, completed=done)
            # Recruited participants work one place each: the last of them may find only HITs they
            # already did, so a recruiting campaign ends with its participants, not with its HITs.
            over = _campaign_status(sessions, campaign_id) == "review" or (
                standin is not None and done == submissions[0]
            )
            if (
                all(not t.is_alive() for t in threads)
                and over
                and _pending_outbox(sessions) == 0
                and (standin is None or recruit_demo.settled(sessions, campaign_id))
            ):
                break
            if (submissions[0], done) != seen:
                moved_at, seen = time.monotonic(), (submissions[0], done)
            time.sleep(0.5)
        progress.update(decided, completed=_decided_count(sessions, campaign_id))
    spent = balance_before - market.balance()
    ok = _summary(console, sessions, campaign_id, results, spent, demo.elapsed())
    if settler is not None and standin is not None:
        settler.stop()
        ok = recruit_demo.report(console, standin, settler) and ok
    return demo.finish(ok)


def _decided_count(sessions: Any, campaign_id: int) -> int:
    with session_scope(sessions) as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(Submission)
                .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
                .where(PublishedHIT.campaign_id == campaign_id, Submission.decision.is_not(None))
            )
            or 0
        )


def _campaign_status(sessions: Any, campaign_id: int) -> str:
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        return campaign.status if campaign else ""


def _pending_outbox(sessions: Any) -> int:
    with session_scope(sessions) as session:
        return int(
            session.scalar(select(func.count()).select_from(OutboxEntry).where(OutboxEntry.status != "done"))
            or 0
        )


def _summary(
    console: Console,
    sessions: Any,
    campaign_id: int,
    results: list[BotResult],
    spent: Decimal,
    elapsed: float,
) -> bool:
    profile_of = {r.worker_id: r.profile for r in results}
    with session_scope(sessions) as session:
        hits = session.scalar(
            select(func.count()).select_from(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        )
        subs = session.scalars(
            select(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        outbox = session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)).all()
        stats = session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id)).all()
        applied: dict[str, int] = defaultdict(int)
        for entry in outbox:
            if entry.status == "done":
                applied[entry.action] += 1
        held = sum(1 for s in subs if s.decision == "held")
        flagged = {s.worker_id for s in stats if s.flagged}
        per_profile: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for sub in subs:
            p = per_profile[profile_of.get(sub.worker_id, "?")]
            p["gold_correct"] += sub.gold_correct
            p["gold_total"] += sub.gold_total
            p["assignments"] += 1
            p[sub.decision or "undecided"] += 1
        for worker_id in flagged:
            per_profile[profile_of.get(worker_id, "?")]["flagged_workers"] += 1

    table = Table(title="Campaign summary")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in [
        ("HITs", hits),
        ("assignments submitted", len(subs)),
        ("approved", applied["approve"]),
        ("rejected", applied["reject"]),
        ("held for QA", held),
        ("flagged workers", len(flagged)),
        ("money spent (rewards + fees)", f"${spent}"),
        ("elapsed", f"{elapsed:.1f} s"),
    ]:
        table.add_row(label, str(value))
    console.print(table)
    prof = Table(title="Per bot profile")
    for col in (
        "profile",
        "bots",
        "assignments",
        "gold accuracy",
        "approved",
        "rejected",
        "held",
        "flagged workers",
    ):
        prof.add_column(col, justify="right" if col != "profile" else "left")
    bots_per: dict[str, int] = defaultdict(int)
    for r in results:
        bots_per[r.profile] += 1
    for name in ("diligent", "careless", "spammer"):
        p = per_profile.get(name, {})
        acc = f"{p.get('gold_correct', 0) / p['gold_total']:.0%}" if p.get("gold_total") else "-"
        prof.add_row(
            name,
            str(bots_per[name]),
            str(p.get("assignments", 0)),
            acc,
            str(p.get("approve", 0)),
            str(p.get("reject", 0)),
            str(p.get("held", 0)),
            str(p.get("flagged_workers", 0)),
        )
    console.print(prof)
    errors = [e for r in results for e in r.errors]
    for e in errors[:5]:
        console.print(f"[yellow]crowd error:[/yellow] {e}")
    spam = per_profile.get("spammer", {})
    diligent = per_profile.get("diligent", {})
    ok = (
        spam.get("flagged_workers", 0) > 0
        and diligent.get("approve", 0) > 0
        and diligent.get("reject", 0) == 0
    )
    console.print(
        "[green]demo finished: spammers caught, diligent workers paid[/green]"
        if ok
        else "[red]demo finished, but the outcome is not as expected[/red]"
    )
    return ok
