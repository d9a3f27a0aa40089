"""Where recruited participants arrive (``/recruit/prolific/enter``) and work their place.

Prolific sends a participant here with ``PROLIFIC_PID``, ``STUDY_ID`` and
``SESSION_ID`` in the URL. The study must be one of ours, and the session
one Prolific itself reports for that participant in that study (asked once,
when the session first arrives), or nothing happens: no account, no place.
Then the marketplace signs them in on the worker account bound to their
Prolific id (``server.capabilities``), and the place page shows the
campaign's instructions and hands out their HITs one after another. When
their HITs are all submitted the server, not the browser, decides they are
done and sends them back to Prolific with the completion code.
"""

from __future__ import annotations

import re
import time
from typing import Any

from flask import Blueprint, Flask, abort, current_app, redirect, render_template, request, url_for
from sqlalchemy import or_, select
from werkzeug.wrappers import Response

from hits.requester.campaigns.recruitment import stored_spec
from hits.requester.files.campaign import CampaignSpec
from hits.requester.files.recruit import completion_target
from hits.requester.recruit.base import Recruiter, RecruitError, RecruitRefused
from hits.requester.recruit.mirroring import queue_standing_grants
from hits.requester.recruit.panel_identity import SIGNATURE_PARAMETER, participant_code, signature_matches
from hits.requester.recruit.places import (
    DONE,
    ENTERABLE,
    PANEL_ID,
    finish_place,
    leave_without_work,
    open_place,
    panel_session_id,
    place_assignments,
    place_of_session,
    places_taken,
    record_assignment,
    recruitment_for_study,
    working_place_of,
)
from hits.requester.recruit.prolific import wire
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.sync import record_status
from hits.requester.tables.campaigns import Campaign
from hits.requester.tables.recruiting import Recruitment, RecruitPlace
from server import capabilities
from server.db import requester_session, runtime
from server.task_queue import send_after_commit

bp = Blueprint("recruit", __name__, url_prefix="/recruit")
#: Tests put a client of their stand-in here; otherwise the settings' Prolific is used.
RECRUITER_EXTENSION = "hitforge.recruiter"
_ID = re.compile(r"[A-Za-z0-9]{1,48}")
#: Prolific session statuses in which the participant is still taking the place.
_TAKING = frozenset({"ACTIVE", "RESERVED"})


def recruiter() -> Recruiter:
    """The recruiting platform's client for this app."""
    override = current_app.extensions.get(RECRUITER_EXTENSION)
    if override is not None:
        return override  # type: ignore[no-any-return]
    return ProlificClient.from_settings(runtime().settings)


def _refused(message: str, status: int = 403) -> tuple[str, int]:
    # A status of 400 or more: the request's transactions are rolled back, nothing it did stays.
    return render_template("recruit/refused.html", message=message), status


@bp.get("/prolific/enter")
def enter() -> Any:
    """A participant arriving from Prolific: checked, signed in, given their place."""
    pid, study_id, session_id = (request.args.get(k, "") for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
    if not all(_ID.fullmatch(value) for value in (pid, study_id, session_id)):
        return _refused(
            "This link lacks your Prolific details (participant, study and session). "
            "Open the study from Prolific so they come with it.",
            400,
        )
    db = requester_session()
    recruitment = recruitment_for_study(db, study_id)
    if recruitment is None:
        return _refused("This link is not for a study running here.", 404)
    place = place_of_session(db, session_id)
    if place is not None:
        if place.participant_id != pid or place.recruitment_id != recruitment.id:
            return _refused("This session belongs to another participant or study.")
        if place.status == "freed":
            return _refused(
                "This place was returned or timed out on Prolific; it can no longer be worked.", 410
            )
    else:
        refusal = _check_with_prolific(pid, study_id, session_id)
        if refusal is not None:
            return refusal
    worker_id = capabilities.sign_in_recruited("prolific", pid)
    if worker_id is None:
        return _refused("This Prolific id cannot be signed in here.")
    if place is None:
        place = open_place(db, recruitment, pid, session_id, worker_id)
        # Grants made before this place (a screening study's, a test taken earlier) join its groups.
        mirrors = queue_standing_grants(db, recruitment, [worker_id])
        if mirrors:
            send_after_commit(db, "hitforge.apply_decisions", mirrors)
    return redirect(url_for("recruit.place", session_id=session_id))


#: A recruitment's internal name: the key of a panel's entry link.
_PANEL_KEY = re.compile(r"hitforge-c[0-9]{1,12}-[0-9a-f]{12}")


@bp.get("/panel/<key>")
def enter_panel(key: str) -> Any:
    """A participant arriving from a panel (Connect, SONA, a mailing list) with their id in the URL.

    No platform can be asked who they are: the link's key must be a panel
    recruitment of ours that is open, the id well formed, and a place free
    (a first visit takes one; a second visit with the same id finds it).
    """
    db = requester_session()
    recruitment = (
        db.scalar(select(Recruitment).where(Recruitment.internal_name == key))
        if _PANEL_KEY.fullmatch(key)
        else None
    )
    if recruitment is None or recruitment.platform != "panel" or recruitment.status not in ENTERABLE:
        return _refused("This link is not for a study running here.", 404)
    campaign = db.get(Campaign, recruitment.campaign_id)
    assert campaign is not None
    recruit = stored_spec(campaign).recruit
    assert recruit is not None and recruit.id_parameter is not None
    pid = request.args.get(recruit.id_parameter, "")
    if not PANEL_ID.fullmatch(pid):
        return _refused(
            "This link lacks your participant id, or it is not one this study accepts. "
            "Open the study from the panel that sent you, so the id comes with it.",
            400,
        )
    if recruit.signed_links and not signature_matches(
        runtime().settings.secret_key,
        recruitment.internal_name,
        pid,
        request.args.get(SIGNATURE_PARAMETER, ""),
    ):
        return _refused(
            "This study is entered only by the link made for you, and this link is not yours (or it "
            "was cut short). Open the link the study's organisers sent you, or ask them for it.",
            403,
        )
    session_id = panel_session_id(recruitment.id, pid)
    place = place_of_session(db, session_id)
    if place is None and places_taken(db, recruitment.id) >= recruitment.places:
        return _refused("Every place of this study is taken.", 410)
    worker_id = capabilities.sign_in_recruited(f"panel:{recruit.panel or campaign.name}", pid)
    if worker_id is None:
        return _refused("This participant id cannot be signed in here.")
    if place is None:
        place = open_place(db, recruitment, pid, session_id, worker_id)
        # Grants made before this place (a screening study's, a test taken earlier) join its groups.
        mirrors = queue_standing_grants(db, recruitment, [worker_id])
        if mirrors:
            send_after_commit(db, "hitforge.apply_decisions", mirrors)
    return redirect(url_for("recruit.place", session_id=session_id))


def _check_with_prolific(pid: str, study_id: str, session_id: str) -> tuple[str, int] | None:
    """None if Prolific reports this session as the participant's, in this study, still taken."""
    try:
        submission = recruiter().get_submission(session_id)
    except RecruitRefused:
        return _refused("Prolific does not know this session.")
    except RecruitError:
        return _refused("Prolific could not be reached to check your session; try again in a minute.", 503)
    if submission.participant_id != pid or (submission.study_id and submission.study_id != study_id):
        return _refused("This session belongs to another participant or study.")
    if submission.status not in _TAKING:
        return _refused(
            f"This session is {submission.status.lower()} on Prolific; it can no longer be worked."
        )
    return None


def _own_place(session_id: str) -> tuple[RecruitPlace, Recruitment, Campaign]:
    """The signed-in participant's place; anyone else's is a 404, like a missing one."""
    db = requester_session()
    place = place_of_session(db, session_id) if _ID.fullmatch(session_id) else None
    worker_id = capabilities.signed_in_worker_id()
    if place is None or worker_id is None or place.worker_id != worker_id:
        abort(404)
    recruitment = db.get(Recruitment, place.recruitment_id)
    campaign = db.get(Campaign, recruitment.campaign_id) if recruitment is not None else None
    if recruitment is None or campaign is None:
        abort(404)
    return place, recruitment, campaign


def _progress(place: RecruitPlace) -> tuple[int, str | None]:
    """Tasks done in the place, and the assignment still being worked, if any."""
    taken = [a.assignment_id for a in place_assignments(requester_session(), place)]
    states = capabilities.assignment_states(taken)
    current = next((a for a in taken if states.get(a) == "Accepted"), None)
    return sum(1 for a in taken if states.get(a) in DONE), current


def _finish(place: RecruitPlace, recruitment: Recruitment, spec: CampaignSpec) -> Response | str:
    finish_place(requester_session(), place)
    code = recruitment.completion_code
    if spec.recruit is not None and spec.recruit.per_participant_codes:
        # Their own code: one passed around credits nobody else (panel_identity.py).
        code = participant_code(
            runtime().settings.secret_key, recruitment.internal_name, place.participant_id
        )
    return _send_back(place, recruitment, spec, code)


def _send_back(
    place: RecruitPlace, recruitment: Recruitment, spec: CampaignSpec, code: str | None
) -> Response | str:
    """Back to the platform: Prolific's completion URL, a panel's (or its page with the code to enter).

    ``code`` None: the participant found no task left (Prolific gets the code asking for a return).
    """
    if recruitment.platform != "panel":
        return redirect(recruiter().completion_url(code or recruitment.return_code))
    assert spec.recruit is not None
    target = completion_target(spec.recruit, code, place.participant_id) if code else None
    if target is not None:
        return redirect(target)
    return render_template("recruit/panel_end.html", code=code, back=spec.recruit.redirect_url)


@bp.get("/place/<session_id>")
def place(session_id: str) -> Any:
    """The participant's place: instructions, how far they are, the next task; done when all are in."""
    place, recruitment, campaign = _own_place(session_id)
    spec = stored_spec(campaign)
    assert spec.recruit is not None
    total = spec.recruit.hits_per_participant
    done, current = _progress(place)
    if place.status == "finished" or (done >= total and current is None):
        return _finish(place, recruitment, spec)
    if place.status == "no_work":
        return _send_back(place, recruitment, spec, None)
    page = render_template(
        "recruit/place.html",
        title=spec.recruit.title,
        study_description=spec.recruit.description,
        task_description=spec.description,
        done=done,
        total=total,
        current=current,
        can_start=place.status == "working" and campaign.hit_type_id is not None,
        session_id=session_id,
    )
    return page


@bp.post("/place/<session_id>/next")
def next_hit(session_id: str) -> Any:
    """Take the next task of the place (or go on with the one being worked)."""
    place, recruitment, campaign = _own_place(session_id)
    spec = stored_spec(campaign)
    assert spec.recruit is not None
    done, current = _progress(place)
    if current is not None:
        return redirect(url_for("worker_site.work", assignment_id=current))
    if done >= spec.recruit.hits_per_participant or place.status != "working":
        return redirect(url_for("recruit.place", session_id=session_id))
    try:
        assignment_id, hit_id = capabilities.accept_next(campaign.hit_type_id or "")
    except capabilities.NoHITToAccept:
        if done:  # the work ran out after some of theirs: what they did is their place's work
            return _finish(place, recruitment, spec)
        # Nothing to do at all: back to Prolific with the code that asks them to return the place.
        leave_without_work(requester_session(), place)
        return _send_back(place, recruitment, spec, None)
    record_assignment(requester_session(), place, assignment_id, hit_id)
    return redirect(url_for("worker_site.work", assignment_id=assignment_id))


def _after_submit(worker_id: str, hit_type_id: str) -> str | None:
    """The place page of a participant who submitted a HIT of their campaign (the worker site asks)."""
    db = requester_session()
    # Either of the campaign's types: adaptive gold puts its HITs for trusted workers in a second one.
    campaign = db.scalar(
        select(Campaign)
        .where(or_(Campaign.hit_type_id == hit_type_id, Campaign.trusted_hit_type_id == hit_type_id))
        .limit(1)
    )
    if campaign is None:
        return None
    found = working_place_of(db, worker_id, campaign.id)
    return url_for("recruit.place", session_id=found.session_id) if found is not None else None


#: Tests put their stand-in's hook secret here; otherwise HITFORGE_PROLIFIC_HOOK_SECRET.
HOOK_SECRET_EXTENSION = "hitforge.recruit-hook-secret"  # noqa: S105 - a key name, not a secret
#: A signed call older than this (seconds) is refused: a captured one cannot be replayed later.
HOOK_MAX_AGE = 300


@bp.post("/prolific/hook")
def hook() -> Any:
    """A Prolific webhook: refused unless signed with our secret; then the submission is read back.

    The payload only names the submission: its status is asked of Prolific,
    never taken from the call. A place returned or timed out is freed, and its
    assignments still in progress go back to their HITs at once.
    """
    secret = current_app.extensions.get(HOOK_SECRET_EXTENSION) or runtime().settings.prolific_hook_secret
    stamp = request.headers.get(wire.TIMESTAMP_HEADER, "")
    body = request.get_data(cache=True)
    if not stamp.isdigit() or abs(time.time() - int(stamp)) > HOOK_MAX_AGE:
        return {"error": "stale or missing timestamp"}, 403
    if not wire.signature_valid(secret, stamp, body, request.headers.get(wire.SIGNATURE_HEADER, "")):
        return {"error": "bad signature"}, 403
    payload = request.get_json(silent=True) or {}
    resource = str(payload.get("resource_id", ""))
    if payload.get("event_type") != "submission.status.change" or not _ID.fullmatch(resource):
        return {"ignored": True}, 200
    if place_of_session(requester_session(), resource) is None:
        return {"ignored": True}, 200  # a session that never reached hitforge
    try:
        submission = recruiter().get_submission(resource)
    except RecruitError:
        return {"error": "Prolific could not be read; polling will catch up"}, 503
    freed = record_status(requester_session(), resource, submission.status)
    released = capabilities.release_assignments(*freed) if freed is not None else 0
    return {"status": submission.status, "released": released}, 200


def init_app(app: Flask) -> None:
    """Register the entry, place and webhook pages, and tell the worker site where participants go next."""
    app.register_blueprint(bp)
    # Prolific posts webhooks without our CSRF token; the HMAC signature guards them instead.
    app.extensions["csrf"].exempt(hook)
    capabilities.provide(app, after_submit=_after_submit)
