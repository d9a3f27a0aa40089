"""Launching an MTurk project from the browser: an HTML layout and a CSV, as MTurk's requester UI took them.

The same steps as ``hitforge batch publish`` (``server/cli/batch.py``): the
layout and the CSV are checked by ``hits.requester.batches.plan`` (every
``${column}`` the layout needs, gold columns, file and line of each problem),
the settings by ``BatchSettings``; the check page shows the plan, the first
row's page as workers will see it (in a sandboxed frame), and the scripts the
layout loads that the site cannot serve. Launching stores the batch and
publishes one HIT per row, once (the project's lock), with the server's own
keys; a QA reviewer's user gets 403, as for campaigns.

A project's files are kept in a fresh folder under ``var/uploads`` named by a
random id, readable only by the user who uploaded them.
"""

from __future__ import annotations

import fcntl
import json
import secrets
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from flask import Response, abort, flash, redirect, render_template, request, url_for
from pydantic import ValidationError
from sqlalchemy import select

from hits.db import session_scope
from hits.money import dollars
from hits.requester.batches.inputs import CsvTable, decode_utf8, read_csv
from hits.requester.batches.plan import BatchSettings, check_gold, check_inputs, create_batch, planned_cost
from hits.requester.batches.publish import publish_batch
from hits.requester.campaigns import control
from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.mturk import Marketplace, MarketplaceError
from hits.requester.tables.batches import Batch
from hits.requester.tables.campaigns import Campaign
from hits.requester.templates.batch.gold import expected_answers, split_columns
from hits.wire.layout import page_html, substitute
from server.cdn import unserved_urls
from server.db import requester_session, runtime
from server.requester.dashboard import uploads
from server.requester.dashboard.base import bp, signed_in_staff, staff_required
from server.requester.dashboard.launch_pages import Shown, key_refusal, launcher

LAYOUT, TABLE, RECORD = "layout.html", "input.csv", "project.json"
#: The form's number fields: the setting each fills, and what one of the form's units is in the
#: setting's (a blank one keeps the default).
_NUMBERS = {
    "assignments": ("assignments", 1),
    "lifetime_days": ("lifetime_seconds", 86_400),
    "duration_minutes": ("assignment_duration_seconds", 60),
}
#: A setting's field on the form, where the two differ (its errors are said next to it).
_FORM_FIELD = {setting: key for key, (setting, _) in _NUMBERS.items()}
_FIELDS = ("name", "title", "description", "keywords", "reward", "budget", *_NUMBERS)


@dataclass
class Project:
    """An uploaded project: its folder, owner, name, settings and, once launched, its campaign."""

    id: str
    folder: Path
    staff_id: int
    name: str
    settings: dict[str, Any]
    campaign_id: int | None = None

    @property
    def layout(self) -> Path:
        return self.folder / "files" / LAYOUT

    @property
    def table(self) -> Path:
        return self.folder / "files" / TABLE

    def save(self) -> None:
        record = {"kind": "project", "staff_id": self.staff_id, "name": self.name, "settings": self.settings}
        partial = self.folder / f"{RECORD}.partial"
        partial.write_text(json.dumps({**record, "campaign_id": self.campaign_id}))
        partial.replace(self.folder / RECORD)


def _load(project_id: str) -> Project:
    """The signed-in user's own project, else 404 (another's is as missing as one that never was)."""
    staff = launcher()
    folder = uploads.uploads_dir(runtime().settings.var_dir) / project_id
    if not (project_id.isascii() and project_id.isalnum() and len(project_id) == 32):
        abort(404)
    try:
        record = json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        abort(404)
    if record.get("staff_id") != staff.id:
        abort(404)
    name, settings = record["name"], record["settings"]
    return Project(project_id, folder, staff.id, name, settings, record.get("campaign_id"))


def _settings(form: dict[str, str]) -> tuple[BatchSettings | None, dict[str, str]]:
    """The form's settings checked, or the message for each field that is wrong."""
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for key in ("title", "description", "keywords", "reward", "budget"):
        if form.get(key, "").strip():
            values[key] = form[key].strip().lstrip("$")
    for key, (setting, unit) in _NUMBERS.items():
        text = form.get(key, "").strip()
        if not text:
            continue
        try:
            number = Decimal(text)
            if not number.is_finite() or number <= 0:
                raise InvalidOperation
        except InvalidOperation:
            problems[key] = "a positive number"
            continue
        values[setting] = int(number * unit)
    if problems:
        return None, problems
    try:
        return BatchSettings.model_validate(values), {}
    except ValidationError as exc:
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else "title"
            problems.setdefault(_FORM_FIELD.get(field, field), error["msg"])
        return None, problems


def _read(layout: bytes, layout_name: str, table: bytes, table_name: str) -> tuple[str, CsvTable]:
    text = decode_utf8(layout_name, layout)
    rows = read_csv(table_name, table)
    check_inputs(layout_name, text, rows)
    return text, rows


def _shown(exc: InputFileError | InputFileErrors) -> list[Shown]:
    errors = exc.errors if isinstance(exc, InputFileErrors) else [exc]
    return [Shown(str(e.path), e.line, e.field, e.message) for e in errors]


def _form_page(status: int = 200, **context: Any) -> Any:
    return render_template("dashboard/launch_project.html", form=context.pop("form", {}), **context), status


@bp.get("/launch/project")
@staff_required
def project_start() -> Any:
    """The project form: a layout, a CSV and the HITs' settings."""
    launcher()
    return _form_page()


@bp.post("/launch/project")
@staff_required
def project_upload() -> Any:
    """Check the layout, the CSV and the settings; keep them and show the check, or say what is wrong."""
    staff = launcher()
    form = {key: request.form.get(key, "")[:2000] for key in _FIELDS}
    layout, table = request.files.get("layout"), request.files.get("input_csv")
    if layout is None or not layout.filename or table is None or not table.filename:
        return _form_page(400, form=form, refused="Not checked: choose the layout (.html) and the CSV.")
    settings, problems = _settings(form)
    name = form["name"].strip() or Path(table.filename).stem
    if not name or len(name) > 128:
        problems["name"] = "a name of 1 to 128 characters"
    layout_bytes, table_bytes = layout.stream.read(), table.stream.read()
    try:
        text, rows = _read(layout_bytes, layout.filename, table_bytes, table.filename)
        if settings is not None:
            check_gold(rows, settings)
    except (InputFileError, InputFileErrors) as exc:
        return _form_page(400, form=form, problems=problems, errors=_shown(exc))
    if problems or settings is None:
        return _form_page(400, form=form, problems=problems)
    if requester_session().scalar(select(Batch.id).where(Batch.name == name)) is not None:
        taken = {"name": f"a project named {name!r} exists: choose another"}
        return _form_page(400, form=form, problems=taken)
    project_id = secrets.token_hex(16)
    folder = uploads.uploads_dir(runtime().settings.var_dir) / project_id
    project = Project(project_id, folder, staff.id, name, {})
    (project.folder / "files").mkdir(parents=True)
    project.layout.write_text(text, encoding="utf-8")
    project.table.write_bytes(table_bytes)
    project.settings = settings.model_dump(mode="json")
    project.save()
    return redirect(url_for("dashboard.project_check", project_id=project.id))


def _check_page(project: Project, refused: str | None = None, status: int = 200) -> Any:
    settings = BatchSettings.model_validate(project.settings)
    text, rows = _read(project.layout.read_bytes(), LAYOUT, project.table.read_bytes(), TABLE)
    fields = split_columns(rows.columns).fields
    # Counted as store_batch counts them: a row with a filled-in Gold.<field> cell.
    gold = sum(1 for row in rows.rows if expected_answers(row.cells, fields))
    cost = planned_cost(settings, len(rows.rows))
    context = {
        "project": project,
        "settings": settings,
        "hits": len(rows.rows),
        "gold": gold,
        "cost": dollars(cost),
        "over_budget": settings.budget is not None and cost > settings.budget,
        "unserved": unserved_urls(text),
        "key_refusal": key_refusal(signed_in_staff()),
        "refused": refused,
    }
    return render_template("dashboard/launch_project_check.html", **context), status


@bp.get("/launch/project/<project_id>")
@staff_required
def project_check(project_id: str) -> Any:
    """The plan of an uploaded project, its first row's page, and the launch button."""
    return _check_page(_load(project_id))


@bp.get("/launch/project/<project_id>/preview")
@staff_required
def project_preview(project_id: str) -> Response:
    """The first row's page as a worker sees it: the requester's HTML, sandboxed, never with gold answers."""
    project = _load(project_id)
    rows = read_csv(TABLE, project.table.read_bytes())
    columns = split_columns(rows.columns)
    row = next((r for r in rows.rows if not expected_answers(r.cells, columns.fields)), rows.rows[0])
    inputs = {name: row.cells[name] for name in columns.inputs}
    response = Response(page_html(substitute(project.layout.read_text(encoding="utf-8"), inputs)))
    # The requester's own markup and scripts: run only in an opaque origin, never as this site.
    response.headers["Content-Security-Policy"] = "sandbox allow-scripts allow-forms"
    return response


@bp.post("/launch/project/<project_id>/launch")
@staff_required
def project_launch(project_id: str) -> Any:
    """Store the batch and publish one HIT per row, as ``hitforge batch publish`` does; land on its page."""
    project = _load(project_id)
    staff = signed_in_staff()
    requester_session().commit()  # the launch writes in units of work of its own (SQLite: one writer)
    with (project.folder / "launch.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a double post waits, then finds the batch launched
        fresh = _load(project_id)
        if fresh.campaign_id is not None:
            return redirect(url_for("dashboard.campaign_page", campaign_id=fresh.campaign_id))
        if (why := key_refusal(staff)) is not None:
            return _check_page(project, refused=f"Not launched: {why}", status=409)
        settings = BatchSettings.model_validate(project.settings)
        try:
            market = Marketplace.from_settings(runtime().settings)
            market.balance()
        except (RuntimeError, MarketplaceError) as exc:
            why = f"the marketplace cannot be reached ({exc}); try again later"
            return _check_page(project, refused=f"Not launched: {why}", status=503)
        sessions = runtime().requester_sessions
        try:
            with session_scope(sessions) as session:
                batch = create_batch(session, project.name, project.layout, project.table, settings)
                campaign = session.get(Campaign, batch.campaign_id)
                assert campaign is not None  # noqa: S101 - the batch's own row
                campaign.access_key_id = market.access_key_id
                control.log_launch(session, campaign.id, staff.id, "launch", f"MTurk project {project.name}")
                batch_id, project.campaign_id = batch.id, campaign.id
        except (InputFileError, InputFileErrors, ValueError) as exc:
            return _check_page(project, refused=f"Not launched: {exc}", status=400)
        project.save()
        try:
            report = publish_batch(sessions, market, batch_id)
        except (MarketplaceError, ValueError) as exc:
            resume = f"hitforge batch publish --resume --name {project.name}"
            flash(f"Publishing stopped: {exc}. Publish the rest with {resume}.", "error")
        else:
            count = report.published + report.already_there
            hits = f"{count} HIT{'s' if count != 1 else ''}"
            flash(f"Project {project.name} is running: {hits} published.", "info")
    return redirect(url_for("dashboard.campaign_page", campaign_id=project.campaign_id))
