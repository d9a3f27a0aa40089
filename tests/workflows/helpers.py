"""Writing refine workflows for tests: drawings, a campaign file, bots that wait for the next round."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import requests
import yaml
from bs4 import BeautifulSoup, Tag

from demo.crowd import Bot, Profile
from demo.tasks.refine import ALT, facts, fill
from demo.tasks.refine import write as write_drawings
from hits.db import session_scope
from hits.requester.files.campaign import load_campaign_file
from hits.requester.workflows.setup import create_workflow


def write_refine_workflow(
    folder: Path,
    name: str,
    *,
    pictures: int = 4,
    complete: int = 2,
    budget: str = "5.00",
    rounds: dict[str, Any] | None = None,
    seeder: dict[str, Any] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """A rounds-first workflow of ``pictures`` drawings; the first ``complete`` come fully described.

    Returns the campaign file and the truth for the bots.
    """
    truth = write_drawings(folder, pictures, 0, len(name))
    rows = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    for row in rows[:complete]:
        image = row["item"]["image"]
        row["item"]["previous"] = " ".join(truth[image])
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = {
        "name": name,
        "template": "refine",
        "title": f"Improve a description {name}",
        "description": "Correct and complete the description of a drawing.",
        "reward": "0.10",
        "budget": budget,
        "assignments_per_hit": 1,
        "items_per_hit": 1,
        "items": "items.jsonl",
        "media_dir": "media",
        "auto_approval_delay_seconds": 3600,
        "workflow": {
            "first_stage": "describe",
            "rounds": rounds or {"max_rounds": 3, "jaccard_threshold": 0.8, "ngram": 2},
            "seeder": seeder or {"kind": "builtin"},
        },
    }
    path = folder / "campaign.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path, truth


def launch_refine_workflow(folder: Path, name: str, market: Any, sessions: Any, **options: Any) -> int:
    """A rounds-first workflow of drawings (``write_refine_workflow``) for ``market``'s requester; its id."""
    path, _truth = write_refine_workflow(folder, name, **options)
    with session_scope(sessions) as session:
        workflow = create_workflow(session, load_campaign_file(path))
        workflow.access_key_id = market.access_key_id
        return workflow.id


def accept_round(worker: Any, hit_id: str) -> tuple[requests.Response, str]:
    """A worker site worker previews and accepts the HIT: the work page, and the HIT page URL it frames."""
    work = worker.post_form(worker.get(f"/hits/{hit_id}"), f'form[action="/hits/{hit_id}/accept"]', {})
    frame = BeautifulSoup(work.text, "html.parser").find("iframe", id="hit-frame")
    assert isinstance(frame, Tag), work.text
    return work, str(frame["src"])


def refine_bot(base_url: str, username: str, profile: Profile, truth: dict[str, Any], title: str) -> Bot:
    bot = Bot(base_url, username, profile, truth, fill_form=fill)
    bot.title_filter = title
    return bot


def work_until(bots: list[Bot], done: Any, timeout: float = 150.0) -> None:
    """Bots take turns at whatever HIT they can see until ``done()``; rounds appear as chains advance."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done():
            return
        before = sum(b.result.submitted for b in bots)
        for bot in bots:
            bot.work_one()
        if sum(b.result.submitted for b in bots) == before:
            time.sleep(0.3)
    raise AssertionError("timed out waiting for the workflow")


__all__ = [
    "ALT",
    "accept_round",
    "facts",
    "launch_refine_workflow",
    "refine_bot",
    "work_until",
    "write_refine_workflow",
]
