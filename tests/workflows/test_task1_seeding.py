"""Task 1's boxes come from the workflow's seeder: asked by the Celery step, once a picture, with the picture.

The seeder here is the HTTP one, talking to :class:`StandInModel`: a small
``http.server`` in the test standing in for a detection model behind a web
address. It records what it was sent (so the test can check it got the
picture's bytes) and answers the demo detector's objects for each picture,
or, when told to, answers slowly or fails.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup, Tag
from click.testing import CliRunner
from sqlalchemy import select

from demo.runner import spawn_worker, stop_process
from hits.db import session_scope
from hits.requester.tables.campaigns import HITSlot, Item, PublishedHIT, Submission
from hits.requester.tables.workflows import Chain
from hits.requester.workflows.engine import stages_of
from hits.requester.workflows.publish import run_step
from hits.requester.workflows.report import find_workflow, workflow_view
from server.cli.main import main
from tests.helpers import hidden_fields
from tests.server.worker_helpers import accept_framed
from tests.workers.test_review_pipeline import wait_for, worker_env
from tests.workflows.test_task1_redo import _workflow_file


class StandInModel(ThreadingHTTPServer):
    """A stand-in for a detection model behind a web address (a test double of a remote service).

    ``answers`` maps an item id to the seeds JSON it answers; ``script`` is
    what to do with each coming request, in order ("slow", "fail"), and then
    answer normally. Every request body received is kept in ``received``.
    """

    daemon_threads = True

    def __init__(self, answers: dict[str, dict[str, Any]], script: list[str] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _ModelHandler)
        self.answers, self.script = answers, list(script or [])
        self.received: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/seed"

    def next_move(self, body: dict[str, Any]) -> str:
        with self.lock:
            self.received.append(body)
            return self.script.pop(0) if self.script else "answer"


class _ModelHandler(BaseHTTPRequestHandler):
    server: StandInModel

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        move = self.server.next_move(body)
        if move == "slow":
            time.sleep(2.0)  # past the seeder's time limit
        if move == "fail":
            self.send_response(500)
            self.end_headers()
            return
        data = json.dumps(self.server.answers.get(body["id"], {"caption": "?"})).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the seeder gave up on a slow answer and closed the connection

    def log_message(self, *args: Any) -> None:
        pass


def _use_model(folder: Path, url: str, **limits: Any) -> dict[str, dict[str, Any]]:
    """Point the campaign file's seeder at ``url``; the detector's seeds per item id (the model's answers)."""
    spec = yaml.safe_load((folder / "campaign.yaml").read_text())
    spec["workflow"]["seeder"] = {"kind": "http", "url": url, "allow_private": True, **limits}
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    answers = {}
    for line in (folder / "seeds.jsonl").read_text().splitlines():
        row = json.loads(line)
        answers[row.pop("id")] = row
    assert all(a["objects"] for a in answers.values())  # the detector found something in every picture
    items = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    assert all("objects" not in row["item"] for row in items)  # the items file holds no boxes
    return answers


def _as_page_objects(seeds: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"label": o["label"], "box": o["box"], "description": o["caption"]} for o in seeds["objects"]]


def _env(settings, requester) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {k: v for k, v in worker_env(settings, requester).items() if k != "HITFORGE_SYNC_INTERVAL"}


pytestmark = pytest.mark.celery


def test_the_celery_step_seeds_task1_from_the_model_once_a_picture_and_the_page_starts_from_its_boxes(
    tmp_path, settings, live_server, requester, market, requester_sessions
) -> None:
    name = "iiw-seeded"
    _workflow_file(tmp_path, "3.00", pictures=2, name=name)
    model = StandInModel({})
    model.answers.update(_use_model(tmp_path, model.url, timeout_seconds=10))
    runner = CliRunner()
    launched = runner.invoke(
        main, ["workflow", "launch", str(tmp_path / "campaign.yaml")], env=_env(settings, requester)
    )
    assert launched.exit_code == 0, launched.output
    assert "seed its first stage" in launched.output
    with session_scope(requester_sessions) as session:
        workflow = find_workflow(session, name)
        assert workflow is not None
        workflow_id = workflow.id
        task1 = stages_of(session, workflow_id)[0].campaign_id
        view = workflow_view(session, workflow)
    # Nothing is published, and nobody asked the model, before a Celery step runs.
    assert model.received == [] and view.stages[0].chains == {"waiting": 2}

    def published() -> list[str]:
        with session_scope(requester_sessions) as session:
            return [
                h
                for h in session.scalars(
                    select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == task1)
                )
                if h
            ]

    process = spawn_worker(worker_env(settings, requester), tmp_path / "celery.log")
    try:
        wait_for(lambda: len(published()) == 2, timeout=90)
        time.sleep(2)  # a few more beats: the model is not asked again
    finally:
        stop_process(process)
    assert run_step(requester_sessions, market, workflow_id, live_server.url + "/tasks/hit").seeded == 0

    # Asked once a picture, and sent the picture itself, not only its file name.
    assert sorted(r["id"] for r in model.received) == sorted(model.answers)
    with session_scope(requester_sessions) as session:
        found = session.scalars(select(Item).where(Item.campaign_id == task1))
        items = {i.external_id: dict(i.payload) for i in found}
        stage = stages_of(session, workflow_id)[0].id
        rows = list(session.scalars(select(Chain).where(Chain.key.in_(list(items)))))
        seeded = {c.key: (c.status, c.seed_source, c.stop_reason) for c in rows if c.stage_id == stage}
        later = {c.key: c.image.get("seeds") for c in rows if c.stage_id != stage}
    for body in model.received:
        picture = tmp_path / "media" / items[body["id"]]["image"]
        assert body["image"] == picture.name and body["media_type"] == "image/png"
        assert base64.b64decode(body["image_base64"]) == picture.read_bytes()
    assert seeded == {k: ("seeded", "seeder http", None) for k in items}
    # The model's objects are Task 1's seeded boxes; Task 2 keeps its answer rather than ask again.
    for key, payload in items.items():
        assert payload["objects"] == _as_page_objects(model.answers[key])
        assert later[key] == model.answers[key]

    # The Task 1 page starts from the model's boxes, and the stored triples are the worker's edit of them.
    hit_id = published()[0]
    worker, params = accept_framed(live_server.url, hit_id, "seeded-worker")
    page = worker.http.get(live_server.url + "/tasks/hit", params=params, timeout=30)
    form = BeautifulSoup(page.text, "html.parser").find("form", id="task-form")
    assert isinstance(form, Tag)
    data = hidden_fields(form)
    with session_scope(requester_sessions) as session:
        hit_row = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id))
        assert hit_row is not None
        slots = session.execute(
            select(HITSlot.position, Item.external_id)
            .join(Item, Item.id == HITSlot.item_id)
            .where(HITSlot.published_hit_id == hit_row.id)
        ).all()
    answers = dict(data)
    for position, key in slots:
        shown = json.loads(data[f"objects-{position}"])
        assert shown == _as_page_objects(model.answers[key])
        answers[f"objects-{position}"] = json.dumps(
            [{**o, "description": f"A shape labelled {o['label']}."} for o in shown]
        )
    for field in (k for k in data if k.startswith("objects-")):
        if field not in {f"objects-{p}" for p, _ in slots}:  # the gold picture: its own seeds, described
            shown = json.loads(data[field])
            answers[field] = json.dumps([{**o, "description": "A shape in the drawing."} for o in shown])
    assert worker.http.post(live_server.url + "/tasks/submit", data=answers, timeout=30).status_code < 400
    with session_scope(requester_sessions) as session:
        stored = session.scalar(select(Submission).where(Submission.published_hit_id == hit_row.id))
        assert stored is not None
    for position, key in slots:
        triples = stored.answers["answers"][position]
        assert [(t["label"], t["box"]) for t in triples] == [
            (o["label"], o["box"]) for o in model.answers[key]["objects"]
        ]
    model.shutdown()


def test_a_slow_or_failing_model_leaves_the_picture_waiting_with_the_error_and_the_next_step_retries(
    tmp_path, settings, live_server, requester, market, requester_sessions
) -> None:
    name = "iiw-seed-fails"
    _workflow_file(tmp_path, "3.00", pictures=1, name=name)
    # First step: the first try overruns the time limit, the second fails; the next step's try answers.
    model = StandInModel({}, script=["slow", "fail"])
    model.answers.update(_use_model(tmp_path, model.url, timeout_seconds=0.5, attempts=2))
    runner = CliRunner()
    env = _env(settings, requester)
    assert (
        runner.invoke(main, ["workflow", "launch", str(tmp_path / "campaign.yaml")], env=env).exit_code == 0
    )
    with session_scope(requester_sessions) as session:
        workflow = find_workflow(session, name)
        assert workflow is not None
        workflow_id = workflow.id
    hit_page = live_server.url + "/tasks/hit"

    first = run_step(requester_sessions, market, workflow_id, hit_page)
    assert first.seeded == 0 and first.published == 0
    assert len(model.received) == 2  # tried twice, within the time limit each
    assert len(first.errors) == 1
    assert "failed after 2 tries" in first.errors[0] and "HTTP 500" in first.errors[0]
    status = json.loads(runner.invoke(main, ["workflow", "status", name, "--format", "json"], env=env).output)
    assert status["stages"][0]["chains"] == {"waiting": 1} and status["stages"][0]["hits"] == 1
    assert [(i["state"], i["waiting_on"]) for i in status["items"]] == [("waiting for seeds", "seeder")]
    assert "HTTP 500" in status["items"][0]["note"]
    with session_scope(requester_sessions) as session:
        task1 = stages_of(session, workflow_id)[0].campaign_id
        assert (
            session.scalar(select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == task1)) is None
        )

    second = run_step(requester_sessions, market, workflow_id, hit_page)
    assert second.seeded == 1 and second.published == 1 and second.errors == []
    assert len(model.received) == 3
    with session_scope(requester_sessions) as session:
        row = session.scalar(select(Chain).where(Chain.stage_id == stages_of(session, workflow_id)[0].id))
        assert row is not None
        assert (row.status, row.seed_source, row.stop_reason) == ("seeded", "seeder http", None)
    model.shutdown()
