"""The pages of every task, the work page and its frame, read the assignment with its HIT in one statement."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from requests import Response

from tests.helpers import statements_sent
from tests.server.worker_helpers import MTURK_HTML, WorkerClient, create_hit, html_question, soup


def _rows_read(live_server, path: str, worker: WorkerClient) -> list[str]:  # type: ignore[no-untyped-def]
    """The statements reading rows (not counts) the server sent while serving ``path``."""
    return _rows_read_by(live_server, lambda: worker.get(path))


def _rows_read_by(live_server, call: Callable[[], Response]) -> list[str]:  # type: ignore[no-untyped-def]
    """The statements reading rows (not counts) the server sent while ``call`` ran (it must succeed)."""
    engine = live_server.server.app.extensions["hitforge"].market_engine
    # Make a sweep due so that it starts with the request, as it may at any time: leaving the
    # background threads out is then exercised on every run instead of by chance.
    live_server.server.app.extensions.setdefault("hitforge_clock", {})["last"] = 0.0
    with statements_sent(engine) as sent:
        assert call().status_code == 200
    return [s for s in sent if s.startswith("SELECT") and "count(*)" not in s]


def test_the_work_page_and_its_frame_read_the_assignment_and_its_hit_together(live_server, mturk) -> None:
    tag = uuid.uuid4().hex[:10]
    create_hit(mturk, html_question(MTURK_HTML), Title=f"Together {tag}")
    worker = WorkerClient(live_server.url, "together")
    work_page = worker.post_form(worker.get("/", params={"q": tag}), "tr[data-hit-type-id] form", {})
    frame_src = str(soup(work_page).find("iframe", id="hit-frame")["src"])  # type: ignore[index]

    work_reads = _rows_read(live_server, work_page.url, worker)
    # The signed-in worker, then the assignment joined to its HIT (and the HIT's type).
    firsts = [s.split(",")[0] for s in work_reads]
    assert firsts == ["SELECT market_workers.id", "SELECT market_assignments.id"]
    assert "JOIN market_hits" in work_reads[1]

    frame_reads = _rows_read(live_server, frame_src, worker)
    assert [s.split(",")[0] for s in frame_reads] == ["SELECT market_assignments.id"]
    assert "JOIN market_hits" in frame_reads[0]


def test_a_group_accept_reads_the_hit_types_notification_setting_with_the_type(live_server, mturk) -> None:
    """The accept records an AssignmentAccepted event if the type asks for it: that is known from
    the HIT type's own query, not asked again on its own (a type without a setting, as most are)."""
    tag = uuid.uuid4().hex[:10]
    create_hit(mturk, html_question(MTURK_HTML), Title=f"Setting {tag}")
    worker = WorkerClient(live_server.url, "setting")
    listing = worker.get("/", params={"q": tag})
    reads = _rows_read_by(live_server, lambda: worker.post_form(listing, "tr[data-hit-type-id] form", {}))
    settings = [s for s in reads if "market_notification_settings" in s]
    assert len(settings) == 1, reads
    assert settings[0].startswith("SELECT market_hit_types.id"), settings
