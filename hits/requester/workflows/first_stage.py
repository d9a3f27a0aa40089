"""Seeding Task 1: a seeder's objects become the first stage's seeded boxes, then the stage is published.

A workflow whose first stage is an object-annotation stage (``SEEDED_TEMPLATES``)
keeps one row per picture of that stage (a :class:`Chain` of kind "single",
never given rounds). A picture whose items-file line lists no objects starts
``waiting``; the Celery step (or ``hitforge workflow step``; never a web
request) claims it, asks the workflow's seeder once with its time limit and
retries, and stores the (label, box, caption) objects in the item, which is
what the Task 1 page shows. Only when every picture is seeded is the stage
published. The seeds are also kept, out of workers' sight, on the picture's
chains in later stages, so the seeder is asked once per picture in all.

Exactly once: a claim is a conditional update (``waiting`` to ``seeding``),
so two steps at once never both ask; a claim whose step died is taken over
after its lease (every try's time limit and the backoff, plus a margin).
A failure puts the picture back to ``waiting`` with the error recorded, and
the next step tries again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from hits.db import session_scope, utcnow
from hits.requester.campaigns.service import PublishInterrupted, publish_campaign
from hits.requester.files.workflow import SEEDED_TEMPLATES
from hits.requester.mturk import Marketplace
from hits.requester.seeders import (
    ObjectSeed,
    Picture,
    Seeder,
    SeederError,
    SeederOptions,
    Seeds,
    call_seeder,
    make_seeder,
)
from hits.requester.tables.campaigns import Campaign, Item
from hits.requester.tables.workflows import Chain, Workflow, WorkflowStage
from hits.requester.templates.objects.validation import DESCRIPTION_MAX, LABEL_MAX, MAX_OBJECTS, box_problem

#: Per-picture states of a seeded first stage.
WAITING, SEEDING, SEEDED = "waiting", "seeding", "seeded"


@dataclass(frozen=True)
class SeederSetup:
    """A workflow's seeder options and where its pictures' files are."""

    options: SeederOptions
    base_dir: Path
    media_dir: Path | None

    def picture(self, key: str, image: dict[str, Any]) -> Picture:
        """The picture a seeder is asked about: a local file when the image is one of the media folder's."""
        name = str(image.get("image", ""))
        local = self.media_dir / name if self.media_dir is not None and "://" not in name else None
        return Picture(item_id=key, image=name, path=local, alt=str(image.get("alt", "")))

    def call(self, seeder: Seeder, picture: Picture) -> Seeds:
        """The seeder's answer for ``picture``, within the workflow's time limit and tries."""
        return call_seeder(
            seeder, picture, timeout=self.options.timeout_seconds, attempts=self.options.attempts
        )

    def lease(self) -> timedelta:
        """How long a claim on a picture lasts: every try's time limit, the backoff and a margin."""
        tries = self.options.attempts
        backoff = sum(min(30.0, 0.5 * 2**i) for i in range(tries - 1))
        return timedelta(seconds=tries * self.options.timeout_seconds + backoff + 60)


def seeder_setup(workflow: Workflow) -> SeederSetup:
    """The seeder options stored with ``workflow`` and the folders its paths are relative to."""
    options = SeederOptions.model_validate(workflow.spec["workflow"].get("seeder") or {})
    base_dir = Path(workflow.spec.get("base_dir") or ".")
    media = workflow.spec.get("media_dir")
    return SeederSetup(options, base_dir, (base_dir / media).resolve() if media else None)


def seeds_json(seeds: Seeds) -> dict[str, Any]:
    """Seeds as stored on a later stage's chain (read back by :func:`seeds_from_json`)."""
    return {
        "caption": seeds.caption,
        "objects": [{"label": o.label, "box": list(o.box), "caption": o.caption} for o in seeds.objects],
    }


def seeds_from_json(data: dict[str, Any]) -> Seeds:
    """Seeds stored by :func:`seeds_json`."""
    return Seeds(
        caption=str(data.get("caption", "")),
        objects=[
            ObjectSeed(str(o["label"]), tuple(o["box"]), str(o.get("caption", "")))  # type: ignore[arg-type]
            for o in data.get("objects", [])
        ],
    )


def fitted_objects(seeds: Seeds, width: int, height: int) -> list[dict[str, Any]]:
    """The seeder's objects as Task 1's seeded objects: boxes clipped to the picture, unusable ones left out.

    A detector's box may stick out of the image or be a sliver; the page
    cannot show those, and a model's slip must not keep the picture from
    being published, so they are clipped or dropped rather than refused.
    """
    out: list[dict[str, Any]] = []
    for obj in seeds.objects:
        label = " ".join(obj.label.split())[:LABEL_MAX]
        x, y, w, h = (float(v) for v in obj.box)
        left, top = max(0.0, x), max(0.0, y)
        right, bottom = min(float(width), x + w), min(float(height), y + h)
        box = [_plain(left), _plain(top), _plain(right - left), _plain(bottom - top)]
        if not label or box_problem(box, width, height):
            continue
        out.append({"label": label, "box": box, "description": obj.caption[:DESCRIPTION_MAX]})
    return out[:MAX_OBJECTS]


def _plain(value: float) -> float | int:
    """A pixel coordinate as the items file would hold it: whole numbers stay whole."""
    value = round(value, 1)
    return int(value) if value.is_integer() else value


def seeded_first_stage(session: Session, workflow_id: int) -> WorkflowStage | None:
    """The workflow's first stage when it is one whose pictures the seeder seeds."""
    first = session.scalar(
        select(WorkflowStage).where(WorkflowStage.workflow_id == workflow_id, WorkflowStage.position == 0)
    )
    if first is None or first.kind != "single":
        return None
    campaign = session.get(Campaign, first.campaign_id)
    return first if campaign is not None and campaign.template in SEEDED_TEMPLATES else None


def add_picture_rows(session: Session, stage: WorkflowStage, items: list[Any]) -> None:
    """One row per picture of a seeded first stage: ``seeded`` if its items-file line has objects."""
    for item in items:
        image = {"image": item.payload.get("image", ""), "alt": item.payload.get("alt", "")}
        row = Chain(stage_id=stage.id, key=item.external_id, image=image, status=WAITING)
        if item.payload.get("objects"):
            row.status, row.seed_source = SEEDED, "items file"
        session.add(row)
    session.flush()


def needs_seeding(session: Session, workflow_id: int) -> bool:
    """Whether pictures of the workflow's first stage still wait for their seeds."""
    stage = seeded_first_stage(session, workflow_id)
    if stage is None:
        return False
    pending = select(Chain.id).where(Chain.stage_id == stage.id, Chain.status.in_((WAITING, SEEDING)))
    return session.scalar(pending.limit(1)) is not None


def seed_first_stage(sessions: Callable[[], Session], workflow_id: int) -> tuple[int, list[str]]:
    """Seed the first stage's waiting pictures (with no transaction open): (seeded, errors)."""
    with session_scope(sessions) as session:
        stage = seeded_first_stage(session, workflow_id)
        workflow = session.get(Workflow, workflow_id)
        if stage is None or workflow is None or workflow.status != "running":
            return 0, []
        setup = seeder_setup(workflow)
        claimed = _claim(session, stage.id, setup.lease())
        stage_id, campaign_id = stage.id, stage.campaign_id
    if not claimed:
        return 0, []
    try:
        seeder = make_seeder(setup.options, setup.base_dir)
    except SeederError as exc:
        _release(sessions, stage_id, {key: str(exc) for key, _ in claimed})
        return 0, [str(exc)]
    seeded: dict[str, Seeds] = {}
    failed: dict[str, str] = {}
    for key, image in claimed:
        try:
            seeded[key] = setup.call(seeder, setup.picture(key, image))
        except SeederError as exc:
            failed[key] = str(exc)
    with session_scope(sessions) as session:
        for key, seeds in seeded.items():
            _store(session, workflow_id, stage_id, campaign_id, key, seeds, setup.options.kind)
    _release(sessions, stage_id, failed)
    return len(seeded), list(failed.values())


def _claim(session: Session, stage_id: int, lease: timedelta) -> list[tuple[str, dict[str, Any]]]:
    """Claim the stage's waiting pictures (and those whose claim outlived its lease): (key, image) each."""
    now = utcnow()
    due = or_(Chain.status == WAITING, and_(Chain.status == SEEDING, Chain.updated_at < now - lease))
    candidates = session.execute(
        select(Chain.id, Chain.key, Chain.image).where(Chain.stage_id == stage_id, due).order_by(Chain.id)
    ).all()
    claimed = []
    for chain_id, key, image in candidates:
        # The condition again, in the update itself: of two steps at once, one claims it.
        done = session.execute(
            update(Chain).where(Chain.id == chain_id, due).values(status=SEEDING, updated_at=now)
        )
        if done.rowcount == 1:  # type: ignore[attr-defined]
            claimed.append((key, dict(image)))
    return claimed


def _store(
    session: Session, workflow_id: int, stage_id: int, campaign_id: int, key: str, seeds: Seeds, kind: str
) -> None:
    """Keep one picture's seeds: its Task 1 item's objects, and the later stages' copy."""
    row = session.scalar(select(Chain).where(Chain.stage_id == stage_id, Chain.key == key))
    if row is None or row.status != SEEDING:
        return  # stored by a step that took over an expired claim
    item = session.scalar(select(Item).where(Item.campaign_id == campaign_id, Item.external_id == key))
    if item is not None:
        size = int(item.payload.get("width", 0)), int(item.payload.get("height", 0))
        item.payload = {**item.payload, "objects": fitted_objects(seeds, *size)}
    later = session.scalars(
        select(Chain)
        .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
        .where(WorkflowStage.workflow_id == workflow_id, Chain.key == key, Chain.stage_id != stage_id)
    )
    for chain in later:
        if chain.seed_text is None and "seeds" not in chain.image:
            chain.image = {**chain.image, "seeds": seeds_json(seeds), "seeds_from": f"seeder {kind}"}
    row.status, row.seed_source, row.stop_reason, row.updated_at = SEEDED, f"seeder {kind}", None, utcnow()


def _release(sessions: Callable[[], Session], stage_id: int, failed: dict[str, str]) -> None:
    """Pictures the seeder failed on wait again, with the error, for the next step."""
    if not failed:
        return
    with session_scope(sessions) as session:
        for key, error in failed.items():
            session.execute(
                update(Chain)
                .where(Chain.stage_id == stage_id, Chain.key == key, Chain.status == SEEDING)
                .values(status=WAITING, stop_reason=f"waiting for seeds: {error}"[:2000], updated_at=utcnow())
            )


def publish_first_stage(
    sessions: Callable[[], Session], market: Marketplace, workflow_id: int, hit_page_url: str
) -> tuple[int, list[str]]:
    """Publish a seeded first stage once all its pictures are seeded (again after an interruption)."""
    with session_scope(sessions) as session:
        stage = seeded_first_stage(session, workflow_id)
        if stage is None or needs_seeding(session, workflow_id):
            return 0, []
        campaign = session.get(Campaign, stage.campaign_id)
        assert campaign is not None
        if campaign.status not in ("draft", "publishing"):
            return 0, []
        campaign_id = campaign.id
    try:
        report = publish_campaign(sessions, market, campaign_id, hit_page_url)
    except (PublishInterrupted, ValueError) as exc:
        return 0, [f"publishing the first stage: {exc}"]
    return report.published + report.already_there, []
