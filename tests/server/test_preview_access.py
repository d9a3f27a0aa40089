"""A preview, by its URL or by an HTMLQuestion frame's long-lived token, only for a worker who may preview."""

from __future__ import annotations

import uuid

import requests

from tests.server.worker_helpers import MTURK_HTML, WorkerClient, create_hit, html_question, soup


def _frame_url(worker: WorkerClient, hit_id: str) -> str:
    preview = worker.get(f"/hits/{hit_id}")
    assert preview.status_code == 200
    return worker.base + str(soup(preview).find("iframe", id="hit-frame")["src"])  # type: ignore[index]


def test_a_blocked_worker_cannot_preview_by_the_hits_url_nor_an_old_frame_link(live_server, mturk) -> None:
    hit_id = create_hit(mturk, html_question(MTURK_HTML), Title=f"Preview {uuid.uuid4().hex[:8]}")
    worker = WorkerClient(live_server.url, "blocked-preview")
    frame = _frame_url(worker, hit_id)
    # The frame is cookie-less: its token alone opens it.
    assert requests.get(frame).status_code == 200
    mturk.create_worker_block(WorkerId=worker.worker_id, Reason="Copied answers.")
    assert worker.get(f"/hits/{hit_id}").status_code == 403
    assert requests.get(frame).status_code == 403
    # Others still preview it.
    other = WorkerClient(live_server.url, "other-preview")
    assert requests.get(_frame_url(other, hit_id)).status_code == 200
    mturk.delete_worker_block(WorkerId=worker.worker_id)
    assert worker.get(f"/hits/{hit_id}").status_code == 200 and requests.get(frame).status_code == 200


def test_a_frame_link_stops_opening_when_the_preview_qualification_goes(live_server, mturk) -> None:
    tag = uuid.uuid4().hex[:8]
    qual = mturk.create_qualification_type(
        Name=f"Previewers {tag}", Description="May look first.", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    requirement = {"QualificationTypeId": qual, "Comparator": "Exists", "ActionsGuarded": "PreviewAndAccept"}
    hit_id = create_hit(
        mturk, html_question(MTURK_HTML), Title=f"Guarded {tag}", QualificationRequirements=[requirement]
    )
    worker = WorkerClient(live_server.url, "was-qualified")
    mturk.associate_qualification_with_worker(
        QualificationTypeId=qual, WorkerId=worker.worker_id, IntegerValue=1
    )
    frame = _frame_url(worker, hit_id)
    assert requests.get(frame).status_code == 200
    mturk.disassociate_qualification_from_worker(QualificationTypeId=qual, WorkerId=worker.worker_id)
    assert worker.get(f"/hits/{hit_id}").status_code == 403
    assert requests.get(frame).status_code == 403
