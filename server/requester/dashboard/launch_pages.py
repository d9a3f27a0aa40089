"""Launching a campaign from the browser: upload its zip, read the check and a preview, launch.

The same steps as ``hitforge launch`` (``server/cli/launch.py``): the check and
plan of ``hitforge campaign check`` (``check_campaign_file``, ``plan_lines``),
then ``create_campaign`` and ``publish_campaign`` with the server's own
marketplace keys. The zip is unpacked by ``uploads`` (which trusts nothing in
it); the preview is the first HIT's page rendered as the page server renders
it (``hit_pages.preview``). Only admins and requester users launch; a QA
reviewer gets 403. A launch stopped half way lands on the campaign's page,
which offers to publish the remaining HITs (``publish_rest``). Campaigns that
recruit on Prolific or declare a workflow are launched with the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Response, abort, flash, redirect, render_template, request, url_for
from sqlalchemy.exc import IntegrityError
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.security import safe_join

from hits.db import session_scope
from hits.money import dollars
from hits.requester.campaigns import control
from hits.requester.campaigns.check import CheckedCampaign, check_campaign_file, plan_lines
from hits.requester.campaigns.service import (
    RESUMABLE,
    BudgetExceeded,
    CampaignExists,
    PublishInterrupted,
    create_campaign,
    publish_campaign,
    unpublished_count,
)
from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.mturk import Marketplace, MarketplaceError
from hits.requester.tables.campaigns import Campaign, StaffUser
from server.db import requester_session, runtime
from server.requester.dashboard import uploads
from server.requester.dashboard.base import (
    bp,
    campaign_or_404,
    current_staff,
    may_manage,
    signed_in_staff,
    staff_required,
)
from server.requester.hit_pages.preview import first_page, practice_preview


def may_launch(staff: StaffUser | None) -> bool:
    """Whether ``staff`` may upload and launch campaigns (a QA reviewer reviews what others launched)."""
    return may_manage(staff)


@bp.context_processor
def _inject_may_launch() -> dict[str, Any]:
    # The frame links the launch page only for those who may use it.
    return {"may_launch_campaigns": may_launch(current_staff())}


@bp.url_value_preprocessor
def _zip_body_limit(endpoint: str | None, values: dict[str, Any] | None) -> None:
    # Runs before CSRF protection parses the form: the zip alone may be larger than the app's limit.
    if endpoint == "dashboard.launch_upload":
        request.max_content_length = uploads.MAX_ZIP_BYTES


@bp.errorhandler(RequestEntityTooLarge)
def _zip_too_large(error: RequestEntityTooLarge) -> Any:
    if request.endpoint != "dashboard.launch_upload":
        return error
    return _upload_page(413, refused=f"Not checked: the zip is over {uploads.MAX_ZIP_BYTES // 2**20} MB.")


def _upload_page(status: int = 200, **context: Any) -> Any:
    limits = {
        "zip_mb": uploads.MAX_ZIP_BYTES // 2**20,
        "unpacked_mb": uploads.MAX_UNPACKED_BYTES // 2**20,
        "members": uploads.MAX_MEMBERS,
    }
    return render_template("dashboard/launch_upload.html", config_limits=limits, **context), status


def launcher() -> StaffUser:
    """The signed-in user, if they may launch; 403 for a QA reviewer's user."""
    staff = signed_in_staff()
    if not may_launch(staff):
        abort(403, "Only requester and admin users launch campaigns; a QA reviewer's user cannot.")
    return staff


def _upload(upload_id: str) -> uploads.Upload:
    """The signed-in user's own upload, else 404 (another's is as missing as one that never was)."""
    found = uploads.load_upload(runtime().settings.var_dir, upload_id, launcher().id)
    if found is None:
        abort(404)
    return found


@dataclass
class Shown:
    """A problem of a campaign's files as the page lists it: the file by its name in the zip."""

    file: str
    line: int | None
    field: str | None
    message: str


@dataclass
class Check:
    """The upload's check: the checked campaign, or the problems that stop it."""

    checked: CheckedCampaign | None
    errors: list[Shown] = field(default_factory=list)


def _check(upload: uploads.Upload) -> Check:
    """``hitforge campaign check`` on the upload: the same checks and plan, errors by file, line, field."""

    def shown(error: InputFileError) -> Shown:
        return Shown(upload.shown(error.path), error.line, error.field, upload.shown(error.message))

    try:
        uploads.confine_paths(upload)
        return Check(check_campaign_file(upload.campaign_file))
    except InputFileErrors as exc:
        return Check(None, [shown(e) for e in exc.errors])
    except InputFileError as exc:
        return Check(None, [shown(exc)])
    except (ValueError, OSError) as exc:  # a file that cannot be read at all (a folder named items.jsonl)
        return Check(None, [Shown(upload.campaign_name, None, None, upload.shown(str(exc)))])


def _cli_only(checked: CheckedCampaign) -> str | None:
    """Why this campaign is launched with the CLI rather than here, if it is."""
    spec, name = checked.loaded.spec, checked.loaded.path.name
    if spec.workflow is not None:
        return f"This campaign declares a workflow: launch it with hitforge workflow launch {name}."
    if spec.recruit is not None:
        return f"This campaign recruits on Prolific: launch it with hitforge launch {name}."
    return None


def key_refusal(staff: StaffUser) -> str | None:
    """Why ``staff`` may not publish with this server's keys, if it may not."""
    key = runtime().settings.mturk_access_key_id
    if not key:
        return (
            "This server has no marketplace keys (HITFORGE_MTURK_ACCESS_KEY_ID and "
            "HITFORGE_MTURK_SECRET_ACCESS_KEY), so it cannot publish HITs."
        )
    if staff.role == "requester" and staff.access_key_id != key:
        # The campaign would be published with, and paid from, another requester account.
        return (
            f"This server publishes with the access key {key}, and your user belongs to "
            f"{staff.access_key_id}: an admin, or a requester user of that key, launches here."
        )
    return None


def _check_page(upload: uploads.Upload, check: Check, refused: str | None = None, status: int = 200) -> Any:
    checked = check.checked
    context: dict[str, Any] = {"upload": upload, "check": check, "refused": refused, "missing": []}
    if checked is not None:
        _, preview = first_page(checked.loaded, upload.preview)
        context.update(
            plan=checked.plan,
            lines=plan_lines(checked.plan),
            cost=dollars(checked.plan.cost),
            cli_only=_cli_only(checked),
            key_refusal=key_refusal(signed_in_staff()),
            missing=sorted(set(preview.missing)),
        )
    return render_template("dashboard/launch_check.html", **context), status


@bp.get("/launch")
@staff_required
def launch_start() -> Any:
    """The upload form."""
    launcher()
    return _upload_page()


@bp.post("/launch")
@staff_required
def launch_upload() -> Any:
    """Store the zip in a fresh folder and check it: the check page, or the upload form saying why not."""
    staff = launcher()
    posted = request.files.get("campaign_zip")
    if posted is None or not posted.filename:
        return _upload_page(400, refused="Not checked: choose a zip file to upload.")
    try:
        upload = uploads.store_zip(runtime().settings.var_dir, posted.stream, posted.filename, staff.id)
    except uploads.UploadRefused as exc:
        return _upload_page(400, refused=f"Not checked: {exc}.")
    check = _check(upload)
    if check.checked is None:
        uploads.discard(upload)  # nothing to launch: nothing kept
        return _upload_page(400, errors=check.errors)
    return redirect(url_for("dashboard.launch_check", upload_id=upload.id))


@bp.get("/launch/<upload_id>")
@staff_required
def launch_check(upload_id: str) -> Any:
    """The check of an upload: its plan and warnings, a preview of its first HIT, the launch button."""
    upload = _upload(upload_id)
    check = _check(upload)
    return _check_page(upload, check, status=200 if check.checked else 400)


@bp.get("/launch/<upload_id>/preview")
@staff_required
def launch_preview(upload_id: str) -> Any:
    """The first HIT's page as a worker sees it (its form submits nowhere: the frame forbids forms)."""
    upload = _upload(upload_id)
    checked = _check(upload).checked
    if checked is None:
        abort(404)
    html, _ = first_page(checked.loaded, upload.preview)
    return html


@bp.get("/launch/<upload_id>/practice/<int:number>")
@staff_required
def launch_practice(upload_id: str, number: int) -> Any:
    """Practice page ``number`` of the upload, with the right answer and why a worker reads once answered."""
    upload = _upload(upload_id)
    checked = _check(upload).checked
    html = practice_preview(checked.loaded, number, upload.preview) if checked is not None else None
    if html is None:
        abort(404)
    return html


@bp.get("/launch/<upload_id>/pictures/<name>")
@staff_required
def launch_picture(upload_id: str, name: str) -> Any:
    """A picture of the preview, under the neutral name the preview copied it to."""
    upload = _upload(upload_id)
    path = safe_join(str(upload.preview / "pictures"), name)
    if path is None or not Path(path).is_file():
        abort(404)
    response = Response(Path(path).read_bytes(), mimetype=_picture_type(name))
    # Pictures only: a requester's SVG opened on its own must not run scripts on this site.
    response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return response


def _picture_type(name: str) -> str:
    import mimetypes

    found = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return found if found.startswith("image/") else "application/octet-stream"


def _refuse(upload: uploads.Upload, check: Check, why: str, status: int) -> Any:
    return _check_page(upload, check, refused=f"Not launched: {why}", status=status)


@bp.post("/launch/<upload_id>/launch")
@staff_required
def launch_campaign(upload_id: str) -> Any:
    """Store the campaign and publish its HITs, as ``hitforge launch`` does; land on its page.

    The upload's lock makes a double post one launch: the second waits for the
    first to store and publish, then finds the campaign and goes to its page.
    """
    upload = _upload(upload_id)
    staff = signed_in_staff()
    # The launch writes in units of work of its own; on SQLite this request's would hold the one
    # write lock they wait for (objects read stay usable: sessions keep them after commit).
    requester_session().commit()
    with uploads.launch_lock(upload):
        fresh = uploads.load_upload(runtime().settings.var_dir, upload.id, staff.id)
        if fresh is not None and fresh.campaign_id is not None:
            return redirect(url_for("dashboard.campaign_page", campaign_id=fresh.campaign_id))
        check = _check(upload)
        checked = check.checked
        if checked is None:
            return _check_page(upload, check, status=400)
        if (why := _cli_only(checked) or key_refusal(staff)) is not None:
            return _refuse(upload, check, why, 409)
        settings = runtime().settings
        try:
            market = Marketplace.from_settings(settings)
            market.balance()  # reachable, and the keys work: before anything is stored
        except (RuntimeError, MarketplaceError) as exc:
            return _refuse(upload, check, f"the marketplace cannot be reached ({exc}); try again later", 503)
        try:
            with session_scope(runtime().requester_sessions) as session:
                campaign = create_campaign(session, checked.loaded)
                # Its requester's own from the start (publishing records the same key), so its page
                # shows it to them even if publishing stops before the first HIT.
                campaign.access_key_id = market.access_key_id
                note = f"from {upload.filename}: {checked.plan.hits} HITs, {dollars(checked.plan.cost)}"
                control.log_launch(session, campaign.id, staff.id, "launch", note)
                campaign_id, name = campaign.id, campaign.name
        except CampaignExists as exc:
            return _refuse(upload, check, _exists(exc), 409)
        except IntegrityError:  # another upload of the same name was stored a moment before
            return _refuse(upload, check, f"a campaign named {checked.plan.name!r} already exists", 409)
        except BudgetExceeded as exc:
            return _refuse(upload, check, f"{exc}. Raise the budget in the campaign file", 400)
        upload.campaign_id = campaign_id
        uploads.save(upload)
        # Still under the lock: a second post lands on the campaign's page once it is published.
        return _publish(market, campaign_id, name)


def _exists(exc: CampaignExists) -> str:
    if exc.resumable:
        return str(exc).split(";")[0] + ": open it to publish the rest, or rename this campaign"
    return f"{exc}: choose another name in the campaign file"


def _publish(market: Marketplace, campaign_id: int, name: str) -> Any:
    """Publish the campaign's pending HITs, then show its page (saying how far it got if it stopped)."""
    settings = runtime().settings
    try:
        report = publish_campaign(
            runtime().requester_sessions, market, campaign_id, settings.public_url + "/tasks/hit"
        )
    except PublishInterrupted as exc:
        flash(
            f"Publishing stopped with {exc.published} of {exc.total} HITs published: {exc.cause}. "
            "Publish the remaining HITs from this page once the marketplace answers.",
            "error",
        )
    except ValueError as exc:
        flash(f"Nothing published: {exc}.", "error")
    else:
        count = report.published + report.already_there
        flash(f"Campaign {name} is running: {count} HIT{'s' if count != 1 else ''} published.", "info")
    return redirect(url_for("dashboard.campaign_page", campaign_id=campaign_id))


@bp.post("/campaigns/<int:campaign_id>/publish-rest")
@staff_required
def publish_rest(campaign_id: int) -> Any:
    """Publish the HITs of a launch that stopped half way (``hitforge launch --resume``)."""
    staff = launcher()
    campaign_or_404(campaign_id)
    rs = requester_session()
    campaign = rs.get(Campaign, campaign_id)
    assert campaign is not None  # campaign_or_404 found it
    back = redirect(url_for("dashboard.campaign_page", campaign_id=campaign_id))
    if campaign.status not in RESUMABLE or not unpublished_count(rs, campaign_id):
        flash(f"Nothing done: every HIT of {campaign.name} is published already.", "error")
        return back
    if campaign.spec.get("recruit") or campaign.spec.get("workflow"):
        flash(f"Nothing done: publish the rest with hitforge launch --resume {campaign.name}.", "error")
        return back
    if (why := key_refusal(staff)) is not None:
        flash(f"Nothing done: {why}", "error")
        return back
    control.log_launch(rs, campaign_id, staff.id, "publish the rest")
    name = campaign.name
    rs.commit()  # the audit line stands whether or not the marketplace answers now
    return _publish(Marketplace.from_settings(runtime().settings), campaign_id, name)
