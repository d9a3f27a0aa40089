"""``hitforge demo --template iiw``: the ImageInWords workflow end to end with a simulated crowd.

Task 1 (object annotation) and Task 2 (a description refined one worker per
round until it stops changing, seeded from Task 1's approved objects) run as
one workflow: the Celery worker advances the chains, seeds them from
the demo's seeds file and publishes each round's HIT; bots work whatever
HITs they can see until every picture is done.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict
from typing import Any

import yaml
from bs4 import Tag
from rich.console import Console
from rich.table import Table
from sqlalchemy import select

from demo.context import DemoContext
from demo.crowd import PROFILES, Bot, CrowdError, Profile
from demo.tasks import FillForm, Truth, iiw
from demo.tasks import refine as refine_demo
from demo.tasks.iiw_objects import write as write_both_tasks
from hits.db import session_scope
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.workflows import ChainRound, Workflow
from hits.requester.workflows.engine import stages_of
from hits.requester.workflows.report import find_workflow, round_records, round_summary, workflow_view
from hits.requester.workflows.setup import create_workflow

#: The crowd: enough careful people for every picture's rounds, and a few who are not. Nobody
#: works a picture twice, so a picture needs its Task 1 workers (3, plus a redo for each rejected
#: assignment: up to 4 by the spammers and careless bots, and now and then a diligent one's),
#: then up to 4 rounds, plus a redo for each rejected round: about 12 bots at worst. With 10
#: bots a picture's round now and then found nobody left to work it (1 CI run in about 10).
CROWD = [("spammer", 2), ("diligent", 12), ("careless", 2)]
MAX_PICTURES = 8
#: The name ``hitforge demo --template`` knows this demo by.
NAME = "iiw"
TIMEOUT = 240.0


def _filler(task1_truth: Truth) -> FillForm:
    """A bot's hands for both tasks: Task 2 (refine) with the truth it is given, Task 1 with Task 1's."""

    def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
        if form.find("fieldset", class_="refine") is not None:
            return refine_demo.fill(form, truth, profile, rng)
        from demo.tasks import get_demo_task

        return get_demo_task("objects").fill_form(form, task1_truth, profile, rng)

    return fill


def _work(bot: Bot, finished: threading.Event, deadline: float) -> None:
    """Work until the workflow is done: rounds appear as chains advance, so an empty list is a pause."""
    try:
        bot.sign_in()
    except CrowdError as exc:
        bot.result.errors.append(str(exc))
        return
    while not finished.is_set() and time.monotonic() < deadline:
        before = bot.result.submitted
        try:
            bot.work_one()
        except CrowdError as exc:
            # A bot that meets an error keeps working, as a person would; the summary lists errors.
            bot.result.errors.append(str(exc))
        if bot.result.submitted == before:
            time.sleep(0.6)  # 16 bots polling for the next round: a pause, not a busy loop


def run(demo: DemoContext) -> int:
    """Write, launch and crowd-source the workflow; print what happened per round; 0 when it all worked."""
    console, url, sessions = demo.console, demo.url, demo.sessions
    market = demo.connect()
    balance_before = market.balance()
    folder = demo.folder
    pictures = max(1, min(demo.hit_count, MAX_PICTURES))
    task1_truth, truth = write_both_tasks(folder, pictures)
    spec = iiw.campaign(pictures)
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    loaded = load_campaign_file(folder / "campaign.yaml")
    with session_scope(sessions) as session:
        workflow = create_workflow(session, loaded)
        workflow.access_key_id = demo.key.access_key_id
        workflow_id = workflow.id
    console.print(
        f"workflow {spec['name']}: {pictures} drawings; Task 1 (objects) then Task 2 (refine); "
        "the Celery worker seeds Task 1 from the seeds file, publishes it, then advances each round"
    )

    finished = threading.Event()
    deadline = time.monotonic() + TIMEOUT
    bots: list[Bot] = [
        Bot(url, f"{name}-{i + 1}", PROFILES[name], truth, seed=i, fill_form=_filler(task1_truth))
        for name, count in CROWD
        for i in range(count)
    ]
    threads = [threading.Thread(target=_work, args=(b, finished, deadline), daemon=True) for b in bots]
    for thread in threads:
        thread.start()
    with console.status("the crowd is working; chains advance round by round") as status:
        while time.monotonic() < deadline:
            with session_scope(sessions) as session:
                found = session.get(Workflow, workflow_id)
                state = found.status if found else ""
                rounds = session.scalar(select(ChainRound.id).order_by(ChainRound.id.desc()).limit(1)) or 0
            status.update(f"the crowd is working: {rounds} round HITs so far")
            if state == "done":
                break
            time.sleep(0.5)
    finished.set()
    for thread in threads:
        thread.join(timeout=10)
    spent = balance_before - market.balance()
    return demo.finish(_summary(console, sessions, spec["name"], bots, spent, demo.elapsed()))


def _single_stage_decisions(
    session: Any, workflow_id: int, profile_of: dict[str, str]
) -> dict[str, Counter[str]]:
    """Decisions on the assignments of the workflow's single (non-rounds) stages, per bot profile."""
    from hits.requester.tables.campaigns import PublishedHIT, Submission

    campaigns = [s.campaign_id for s in stages_of(session, workflow_id) if s.kind == "single"]
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for worker, decision in session.execute(
        select(Submission.worker_id, Submission.decision)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id.in_(campaigns))
    ).all():
        out[profile_of.get(worker, "?")][decision or "undecided"] += 1
    return dict(out)


def _single_stage_workers(session: Any, workflow_id: int) -> dict[str, set[str]]:
    """Per picture, the workers who submitted work on it in the workflow's single stages (Task 1)."""
    from hits.requester.tables.campaigns import HITSlot, Item, Submission

    campaigns = [s.campaign_id for s in stages_of(session, workflow_id) if s.kind == "single"]
    out: dict[str, set[str]] = defaultdict(set)
    for key, worker in session.execute(
        select(Item.external_id, Submission.worker_id)
        .join(HITSlot, HITSlot.item_id == Item.id)
        .join(Submission, Submission.published_hit_id == HITSlot.published_hit_id)
        .where(Item.campaign_id.in_(campaigns))
    ).all():
        out[key].add(worker)
    return dict(out)


def _summary(console: Console, sessions: Any, name: str, bots: list[Bot], spent: Any, elapsed: float) -> bool:
    profile_of = {b.result.worker_id: b.result.profile for b in bots}
    with session_scope(sessions) as session:
        workflow = find_workflow(session, name)
        assert workflow is not None
        view = workflow_view(session, workflow)
        records = round_records(session, workflow.id, all_attempts=True)
        task1 = _single_stage_decisions(session, workflow.id, profile_of)
        annotators = _single_stage_workers(session, workflow.id)
    stages = Table(title=f"Workflow {name}: {view.status}")
    for col in ("stage", "from", "template", "HITs", "pictures"):
        stages.add_column(col)
    for s in view.stages:
        pictures = ", ".join(f"{k} {v}" for k, v in sorted(s.chains.items())) or "-"
        stages.add_row(s.name, s.source, s.template, str(s.hits), pictures)
    console.print(stages)
    reasons = Counter((c.stop_reason or c.status).split(":")[0] for c in view.chains)
    console.print("pictures: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    for chain in view.chains:
        if chain.status not in ("done", "stopped"):
            console.print(f"  {chain.stage}/{chain.key} waits on {chain.waiting_on}", highlight=False)
    summary = round_summary([r for r in records if r["status"] == "approved"])
    table = Table(title="Task 2 over rounds (means)")
    for col in ("round", "pictures", "seconds", "words", "Jaccard", "edit distance"):
        table.add_column(col, justify="right")
    for row in summary:
        table.add_row(
            *(str(row.get(k)) for k in ("round", "pictures", "seconds", "tokens", "jaccard", "edit_distance"))
        )
    console.print(table)
    decided: dict[str, Counter[str]] = defaultdict(Counter)
    per_chain: dict[str, list[str]] = defaultdict(list)
    for r in records:
        decided[profile_of.get(r["worker"], "?")][r["status"]] += 1
        if r["worker"]:
            per_chain[f"{r['stage']}/{r['item']}"].append(r["worker"])
    if task1:
        first = Table(title="Task 1 assignments per bot profile")
        for col in ("profile", "approved", "rejected", "held or undecided"):
            first.add_column(col, justify="right" if col != "profile" else "left")
        for profile in ("diligent", "careless", "spammer"):
            c = task1.get(profile, Counter())
            first.add_row(profile, str(c["approve"]), str(c["reject"]), str(c["held"] + c["undecided"]))
        console.print(first)
    crowd = Table(title="Task 2 rounds per bot profile")
    for col in ("profile", "approved", "rejected", "open or held"):
        crowd.add_column(col, justify="right" if col != "profile" else "left")
    for profile in ("diligent", "careless", "spammer"):
        c = decided.get(profile, Counter())
        crowd.add_row(profile, str(c["approved"]), str(c["rejected"]), str(c["open"] + c["held"]))
    console.print(crowd)
    console.print(f"money spent (rewards + fees): ${spent}; elapsed {elapsed:.1f} s")
    for error in [e for b in bots for e in b.result.errors][:5]:
        console.print(f"[yellow]crowd error:[/yellow] {error}")
    # Twice: two rounds of a picture, or a round of a picture its worker had annotated in Task 1.
    twice = [
        k
        for k, workers in per_chain.items()
        if len(set(workers)) != len(workers) or set(workers) & annotators.get(k.split("/", 1)[1], set())
    ]
    redone = any(r["status"] == "rejected" for r in records)
    described = sum(1 for c in view.chains if c.status == "done")
    # A picture may stop for a stated reason (Task 1 approved no work for it: all its annotators
    # failed gold); every other one converged or reached the round limit.
    stopped = [c for c in view.chains if c.status == "stopped"]
    ok = view.status == "done" and not twice and described > 0 and all(c.stop_reason for c in stopped)
    console.print(
        f"[green]demo finished: {described} picture(s) converged or reached the round limit"
        + (f", {len(stopped)} stopped with a reason" if stopped else "")
        + "; no worker saw a picture twice, in either task"
        + f"{'; rejected rounds were redone' if redone else ''}[/green]"
        if ok
        else "[red]demo finished, but the outcome is not as expected[/red]"
    )
    return ok
