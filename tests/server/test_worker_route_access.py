"""Every worker-visible route that takes an id or a token: another's, a made-up or a tampered one is refused.

Two workers sign up. Worker A holds real things: an assignment of an
HTMLQuestion HIT, an assignment of a campaign's HIT (framed from
``/tasks/hit``), a qualification test attempt. Worker B, who holds the same
kinds of things, and an anonymous visitor then aim each route at A's ids,
mixed with their own and with made-up or tampered ones. Each is refused with
exactly the answer a missing id gets (nothing tells "not yours" from "no
such"), and nothing of A's changes.

``REVIEWED`` is the review (docs/worker-site.md, "Worker routes reviewed"):
for each route, what it takes, what is checked and which test shows it.
``test_every_worker_route_that_takes_a_value_is_reviewed`` fails when a
worker-facing route with a URL parameter is added to the app without an entry
here, so a new route gets reviewed too.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from itsdangerous import URLSafeTimedSerializer
from sqlalchemy import func, select

from hits.db import session_scope
from hits.market.models import Assignment
from hits.requester.mturk import Marketplace
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.tables.qualification import QualificationAttempt
from server.market.worker_site.uploads import SALT as UPLOAD_SALT
from tests.conftest import boto3_client, new_requester
from tests.helpers import altered_token, launch_demo_campaign
from tests.server.test_dashboard_roles import seed_campaign
from tests.server.test_site_fuzz import _rules
from tests.server.worker_helpers import (
    MTURK_HTML,
    WorkerClient,
    create_hit,
    csrf_of,
    frame_src,
    html_question,
)

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "worker-site.md"
HERE = "tests/server/test_worker_route_access.py"


@dataclass(frozen=True)
class Reviewed:
    """One route of the review: what a worker can change in it, what the server checks, the test."""

    takes: str
    checked: str
    test: str  # "path/to/test_file.py::test_name"


#: Staff pages (their own role checks and tests: tests/server/test_dashboard_roles.py), the MTurk
#: API (signed requests: tests/market/), Flask's static files (the app's own, no ids).
# The dashboard and its JSON API are for staff, each route checked against what the user may see
# (tests/server/test_dashboard_roles.py, tests/server/test_api.py).
NOT_WORKER_FACING_PREFIXES = ("dashboard.", "api.")
NOT_WORKER_FACING = {"mturk_api.dispatch", "static"}

_OWN = (
    "own_assignment: the signed-in worker's, else 404 exactly as a missing id; anonymous: sign-in for any id"
)
REVIEWED: dict[str, Reviewed] = {
    "worker_site.work": Reviewed("assignment id (path)", _OWN, f"{HERE}::test_another_workers_assignment"),
    "worker_site.answer_question_form": Reviewed(
        "assignment id (path), answers", _OWN + "; nothing stored", f"{HERE}::test_another_workers_assignment"
    ),
    "worker_site.return_assignment": Reviewed(
        "assignment id (path)",
        _OWN + "; the assignment stays Accepted",
        f"{HERE}::test_another_workers_assignment",
    ),
    "worker_site.external_submit": Reviewed(
        "assignmentId, hitforgeToken (form)",
        "the session's worker (or the token's, bound to the assignment) must hold it: 404 as a missing id; "
        "no sign-in and no token: 403",
        f"{HERE}::test_another_workers_assignment",
    ),
    "worker_site.external_submit_with_capability": Reviewed(
        "capability (path), assignmentId (form)",
        "HMAC of assignment, worker and HIT with the app's secret, compared in constant time: 403 for "
        "anything else, missing ids included",
        f"{HERE}::test_capabilities_and_tokens_bound_to_another_assignment",
    ),
    "worker_site.html_question": Reviewed(
        "HIT id (path), assignmentId, hitforgeToken (query)",
        "signed token naming worker, HIT and assignment: 403 if it does not match; a preview's token is "
        "asked again whether its worker may preview. The URL is a bearer capability (the sandboxed frame "
        "has no cookie)",
        f"{HERE}::test_capabilities_and_tokens_bound_to_another_assignment",
    ),
    "worker_site.preview": Reviewed(
        "HIT id (path)",
        "404 if there is none; 403 if the worker is blocked or lacks a Preview-guarded qualification. "
        "HIT ids are the marketplace's listing, not secrets; what is guarded is the HIT's content, "
        "as MTurk did",
        "tests/server/test_preview_access.py::test_a_blocked_worker_cannot_preview_by_the_hits_url_nor_an_old_frame_link",
    ),
    "worker_site.accept": Reviewed(
        "HIT id (path)",
        "assignment_ops.accept: blocks, qualifications, availability; a refusal is a message, nothing stored",
        "tests/server/test_accept_blocked.py::test_a_blocked_worker_cannot_accept_from_pages_loaded_before_the_block",
    ),
    "worker_site.accept_from_group": Reviewed(
        "HIT type id (path)",
        "as accept, for a HIT of the group the worker may take; a made-up type takes nothing",
        f"{HERE}::test_made_up_public_ids_change_nothing",
    ),
    "worker_site.qualification": Reviewed(
        "qualification type id (path)",
        "an Active type of a requester, else 404 exactly as a missing id; the page shows the signed-in "
        "worker's own standing only",
        f"{HERE}::test_made_up_public_ids_change_nothing",
    ),
    "worker_site.request_without_test": Reviewed(
        "qualification type id (path)",
        "as the type's page; the request is the signed-in worker's",
        f"{HERE}::test_made_up_public_ids_change_nothing",
    ),
    "worker_site.take_test": Reviewed(
        "qualification type id (path), answers",
        "as the type's page; the attempt and clock are the signed-in worker's",
        f"{HERE}::test_made_up_public_ids_change_nothing",
    ),
    "worker_site.start_test": Reviewed(
        "qualification type id (path)",
        "as the type's page; the clock is the signed-in worker's",
        f"{HERE}::test_made_up_public_ids_change_nothing",
    ),
    "worker_site.uploaded_file": Reviewed(
        "token (path)",
        "itsdangerous token signed with the app's secret, 60 s: a tampered, made-up or old one is a 403; "
        "served as an attachment with a sandbox CSP",
        f"{HERE}::test_capabilities_and_tokens_bound_to_another_assignment",
    ),
    "qualify.intro": Reviewed(
        "test id (path)",
        "sign-in first (anonymous: sign-in for any id, existing or not), then 404 for a missing test; "
        "any signed-in worker may see and take a published test",
        f"{HERE}::test_another_workers_qualification_attempt",
    ),
    "qualify.start": Reviewed(
        "test id (path)",
        "as intro; the attempt is the signed-in worker's, within the test's attempts and cool-down",
        f"{HERE}::test_another_workers_qualification_attempt",
    ),
    "qualify.media": Reviewed(
        "test id, file name (path)",
        "as intro; the name is looked up in the bank's catalogue of served pictures, "
        "never joined to a folder",
        "tests/qualification/test_media_route.py::test_only_the_pictures_items_name_are_served_by_any_path_spelling",
    ),
    "qualify.attempt": Reviewed(
        "attempt id (path)",
        "sign-in first, then the signed-in worker's attempt, else 404 exactly as a missing id",
        f"{HERE}::test_another_workers_qualification_attempt",
    ),
    "qualify.submit": Reviewed(
        "attempt id (path), answers",
        "as attempt; another's attempt is not graded and nothing is queued",
        f"{HERE}::test_another_workers_qualification_attempt",
    ),
    "hit_pages.show": Reviewed(
        "hitId, assignmentId, workerId, turkSubmitTo, hitforgePreview (query)",
        "page_access: turkSubmitTo must carry the HMAC of exactly that assignment, worker and HIT "
        "(a preview, the preview capability): 403 with one message; no gold exposure is recorded",
        f"{HERE}::test_campaign_pages_of_another_assignment",
    ),
    "hit_pages.submit": Reviewed(
        "the same (form), answers",
        "as show: 403, no Submission stored, nothing relayed",
        f"{HERE}::test_campaign_pages_of_another_assignment",
    ),
    "hit_pages.media": Reviewed(
        "HIT row, position, tag (path), a (query)",
        "HMAC tag over HIT row, position, assignment and picture: 404 for any other combination",
        f"{HERE}::test_campaign_pages_of_another_assignment",
    ),
    "hit_pages.guidance_picture": Reviewed(
        "campaign id, picture index, tag (path)",
        "HMAC tag over campaign and index, and only the pictures the campaign's guidance shows "
        "(the same for every worker of it): 404 for a forged tag, another index or campaign",
        "tests/templates/test_guidance_pages.py::"
        "test_the_page_server_shows_guidance_and_serves_only_its_pictures",
    ),
    "hit_pages.practice": Reviewed(
        "training item index (path), the page parameters (query or form), an answer",
        "page_access as show: 403 for another worker's or a made-up assignment; the campaign is the HIT's, "
        "never named in the URL: an index past its training items (another campaign's) is a 404; the "
        "right answer only in the reply to an answer; nothing stored",
        "tests/templates/test_practice_pages.py::"
        "test_another_campaigns_training_index_and_forged_parameters_are_refused",
    ),
    "heatmap_pages.make": Reviewed(
        "page parameters (form)",
        "page_access as show: 403 before any heatmap is made",
        f"{HERE}::test_campaign_pages_of_another_assignment",
    ),
    "heatmap_pages.shown": Reviewed(
        "page parameters (form)",
        "page_access as show: 403 before anything is recorded",
        f"{HERE}::test_campaign_pages_of_another_assignment",
    ),
    "cdn.library_file": Reviewed(
        "library, version, file (path)",
        "installed copies only, send_from_directory (no traversal), asset types only; public files",
        "tests/server/test_cdn_map.py::test_anything_else_under_cdn_is_not_found",
    ),
    "cdn.site_file": Reviewed(
        "prefix number, file (path)",
        "the operator's configured folders or files only, as library_file",
        "tests/server/test_cdn_map.py::test_operator_files_are_served_under_cdn_site",
    ),
    "worker_site.invitation": Reviewed(
        "invitation token (path)",
        "only the token's SHA-256 is looked up (a token of another shape is not even looked up); "
        "unknown: 404, expired or used up: 410, the same page to anyone; shows nothing but the type's name",
        "tests/market/test_invitations.py::test_unknown_expired_and_used_up_links_are_refused_and_change_nothing",
    ),
    "worker_site.sign_up_with_invitation": Reviewed(
        "invitation token (path), user name, password, country",
        "the invitation's row locked, then the sign-up rules; a refused link or sign-up makes no account "
        "and counts no use",
        "tests/market/test_invitations.py::test_concurrent_sign_ups_on_a_single_use_link_make_one_account",
    ),
    "worker_site.accept_invitation": Reviewed(
        "invitation token (path)",
        "signed in; the row locked; one use a worker, a second click neither counts nor grants again",
        "tests/market/test_invitations.py::test_concurrent_redemptions_of_a_single_use_link_let_exactly_one_in",
    ),
    "recruit.place": Reviewed(
        "Prolific session id (path)",
        "the signed-in worker must be the place's: another participant's, a made-up or malformed id is a "
        "404 like a missing one",
        "tests/recruit/test_entry.py::test_another_participants_place_is_a_404_like_a_missing_one",
    ),
    "recruit.enter_panel": Reviewed(
        "panel link key (path), the participant's panel id (query)",
        "the key must be an open panel recruitment's (else 404, like a missing one); the id well formed "
        "(else 400); a place free; the account is bound to panel and id, never an ordinary one; nothing "
        "made on a refusal",
        "tests/recruit/test_panel.py::test_hostile_panel_entries_get_no_account_and_no_place",
    ),
    "recruit.next_hit": Reviewed(
        "Prolific session id (path)",
        "as recruit.place: 404, nothing accepted nor recorded",
        "tests/recruit/test_entry.py::test_another_participants_place_is_a_404_like_a_missing_one",
    ),
}


def _worker_facing() -> dict[str, set[str]]:
    """Worker-facing endpoint -> the URL parameters of its rules."""
    found: dict[str, set[str]] = {}
    for rule in _rules():
        if rule.endpoint in NOT_WORKER_FACING or rule.endpoint.startswith(NOT_WORKER_FACING_PREFIXES):
            continue
        found.setdefault(rule.endpoint, set()).update(rule.arguments)
    return found


def test_every_worker_route_that_takes_a_value_is_reviewed() -> None:
    facing = _worker_facing()
    unreviewed = sorted(e for e, args in facing.items() if args and e not in REVIEWED)
    assert not unreviewed, (
        f"worker-facing routes with URL parameters not reviewed: {unreviewed}. Check that another worker's, "
        f"a made-up and a tampered value are refused like a missing one, then add them to REVIEWED in {HERE} "
        "and to the table in docs/worker-site.md"
    )
    assert not REVIEWED.keys() - facing.keys(), "REVIEWED names routes the app no longer has"
    doc = DOC.read_text()
    for endpoint, review in REVIEWED.items():
        path, _, name = review.test.partition("::")
        assert f"def {name}(" in (REPO / path).read_text(), f"{endpoint}: no test {review.test}"
        assert f"`{endpoint}`" in doc, f"{endpoint} is missing from the review table of docs/worker-site.md"


# --- the world: two workers, and what worker A holds --------------------------------------------


@dataclass
class Holdings:
    """What one worker holds."""

    client: WorkerClient
    assignment: str  # of the HTMLQuestion HIT
    frame: dict[str, str]  # its /hits/<id>/html frame parameters
    page: dict[str, str]  # the campaign HIT page's parameters (/tasks/hit)
    attempt: int  # a qualification test attempt, not submitted


@dataclass
class World:
    url: str
    a: Holdings
    b: Holdings
    html_hit: str
    campaign_hit: str
    campaign_id: int
    test_id: int


def _params(src: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(src).query).items()}


def _accept(worker: WorkerClient, hit_id: str) -> tuple[str, dict[str, str]]:
    work = worker.post_form(worker.get(f"/hits/{hit_id}"), f'form[action="/hits/{hit_id}/accept"]', {})
    match = re.search(r"/work/(\w+)", work.url)
    assert match is not None, work.url
    return match.group(1), _params(frame_src(work))


def _start_attempt(worker: WorkerClient, test_id: int) -> int:
    started = worker.post_form(
        worker.get(f"/qualify/{test_id}"), f'form[action="/qualify/{test_id}/start"]', {}
    )
    match = re.search(r"/qualify/attempts/(\d+)$", started.url)
    assert match is not None, (started.status_code, started.url)
    return int(match.group(1))


@pytest.fixture(scope="module")
def world(live_server, market_sessions, requester_sessions, tmp_path_factory) -> World:  # type: ignore[no-untyped-def]
    key = new_requester(market_sessions, "100.00")
    html_hit = create_hit(boto3_client(live_server.url, key), html_question(MTURK_HTML), MaxAssignments=2)
    market = Marketplace.connect(live_server.url, key.access_key_id, key.secret_access_key)
    name = f"routes-{uuid.uuid4().hex[:6]}"
    campaign_id, _ = launch_demo_campaign(
        tmp_path_factory.mktemp("routes"), market, requester_sessions, live_server.url, hits=1, name=name
    )
    with session_scope(requester_sessions) as session:
        campaign_hit = session.scalar(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        )
    assert campaign_hit
    test_id = seed_campaign(requester_sessions).test_id
    held = []
    for who in ("a", "b"):
        client = WorkerClient(live_server.url, who)
        assignment, frame = _accept(client, html_hit)
        _, page = _accept(client, campaign_hit)
        held.append(Holdings(client, assignment, frame, page, _start_attempt(client, test_id)))
    return World(live_server.url, held[0], held[1], html_hit, campaign_hit, campaign_id, test_id)


def _capability_altered(submit_to: str) -> str:
    """A ``turkSubmitTo`` URL whose capability is forged (:func:`altered_token`)."""
    head, capability = submit_to.rsplit("/s/", 1)
    return f"{head}/s/{altered_token(capability)}"


def _same(refused: requests.Response, missing: requests.Response, what: str) -> None:
    """``refused`` answers exactly as ``missing`` (a made-up id) does."""
    assert refused.status_code == missing.status_code, (what, refused.status_code, missing.status_code)
    assert refused.text == missing.text, what


def _to_signin(response: requests.Response, path: str) -> None:
    """An anonymous visitor is sent to sign in, whatever the id."""
    assert response.status_code == 302, (path, response.status_code)
    assert response.headers["Location"].startswith("/signin?next="), (path, response.headers["Location"])


def _assignment_status(market_sessions, assignment_id: str) -> str:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        found = session.get(Assignment, assignment_id)
        assert found is not None
        return found.status


def _attempts(requester_sessions, test_id: int) -> int:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        counted = session.scalar(
            select(func.count())
            .select_from(QualificationAttempt)
            .where(QualificationAttempt.test_id == test_id)
        )
        return int(counted or 0)


# --- the checks ------------------------------------------------------------------------------------


def test_another_workers_assignment(world: World, market_sessions) -> None:  # type: ignore[no-untyped-def]
    a, b = world.a, world.b
    token = csrf_of(b.client.get("/"))
    made_up = "3" + uuid.uuid4().hex[:29].upper()
    for path, method in (("/work/{}", "GET"), ("/work/{}/answers", "POST"), ("/work/{}/return", "POST")):
        data = {"csrf_token": token, "caption": "mine now"} if method == "POST" else None
        missing = b.client.http.request(
            method, world.url + path.format(made_up), data=data, allow_redirects=False
        )
        assert missing.status_code == 404, path
        theirs = b.client.http.request(
            method, world.url + path.format(a.assignment), data=data, allow_redirects=False
        )
        _same(theirs, missing, f"B {method} {path}")
        for assignment in (a.assignment, made_up):
            anonymous = requests.request(
                method, world.url + path.format(assignment), data=data, allow_redirects=False
            )
            if method == "GET":
                _to_signin(anonymous, path)
            else:  # no session, so no CSRF token: refused before any id is looked at
                assert anonymous.status_code in (302, 400), (path, anonymous.status_code)
    # externalSubmit with another worker's assignment id, signed in or not.
    missing = b.client.http.post(
        world.url + "/mturk/externalSubmit", data={"assignmentId": made_up, "x": "1"}
    )
    theirs = b.client.http.post(
        world.url + "/mturk/externalSubmit", data={"assignmentId": a.assignment, "x": "1"}
    )
    assert missing.status_code == 404
    _same(theirs, missing, "B externalSubmit of A's assignment")
    posts = [
        requests.post(world.url + "/mturk/externalSubmit", data={"assignmentId": assignment, "x": "1"})
        for assignment in (a.assignment, made_up)
    ]
    assert posts[0].status_code == 403
    _same(posts[0], posts[1], "anonymous externalSubmit")
    assert _assignment_status(market_sessions, a.assignment) == "Accepted"
    assert a.client.get(f"/work/{a.assignment}").status_code == 200  # still A's, still open


def test_capabilities_and_tokens_bound_to_another_assignment(world: World, market_sessions) -> None:  # type: ignore[no-untyped-def]
    a, b = world.a, world.b
    base = world.url
    # /s/<capability>/mturk/externalSubmit: B's capability, or one made up, with A's assignment.
    b_capability = b.page["turkSubmitTo"].rsplit("/s/", 1)[1]
    made_up = "3" + uuid.uuid4().hex[:29].upper()
    missing = requests.post(f"{base}/s/{b_capability}/mturk/externalSubmit", data={"assignmentId": made_up})
    assert missing.status_code == 403
    for capability in (b_capability, "A" * 43, altered_token(b_capability)):
        refused = requests.post(
            f"{base}/s/{capability}/mturk/externalSubmit", data={"assignmentId": a.assignment}
        )
        _same(refused, missing, f"capability {capability}")
    # /hits/<id>/html: A's frame with B's token, or B's frame pointed at A's assignment.
    frame = dict(a.frame)
    mixes = [
        {**frame, "hitforgeToken": b.frame["hitforgeToken"]},
        {**b.frame, "assignmentId": a.assignment},
        {**frame, "hitforgeToken": altered_token(frame["hitforgeToken"])},
        {**frame, "assignmentId": made_up},
    ]
    for params in mixes:
        for who in (b.client.http, requests.Session()):
            refused = who.get(f"{base}/hits/{world.html_hit}/html", params=params)
            assert refused.status_code == 403, params
            assert "mturk_form" not in refused.text
    # hitforgeToken posted to externalSubmit: B's token does not submit A's assignment.
    posted = requests.post(
        f"{base}/mturk/externalSubmit",
        data={"assignmentId": a.assignment, "hitforgeToken": b.frame["hitforgeToken"], "x": "1"},
    )
    assert posted.status_code == 403
    # /uploads/<token>: made up, tampered, or signed with another secret.
    foreign = URLSafeTimedSerializer("not-the-apps-secret", salt=UPLOAD_SALT).dumps("some-file-key")
    answers = [
        requests.get(f"{base}/uploads/{token}") for token in ("nonsense", foreign, foreign[:-3] + "abc")
    ]
    for answer in answers:
        _same(answer, answers[0], "upload token")
    assert answers[0].status_code == 403
    assert _assignment_status(market_sessions, a.assignment) == "Accepted"


def test_another_workers_qualification_attempt(world: World, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    a, b = world.a, world.b
    base = world.url
    token = csrf_of(b.client.get("/"))
    made_up = 2_000_000_000
    before = _attempts(requester_sessions, world.test_id)
    missing_page = b.client.get(f"/qualify/attempts/{made_up}")
    assert missing_page.status_code == 404
    _same(b.client.get(f"/qualify/attempts/{a.attempt}"), missing_page, "B opens A's attempt")
    answers = {"csrf_token": token, "q-1": "a"}
    missing_submit = b.client.http.post(f"{base}/qualify/attempts/{made_up}/submit", data=answers)
    assert missing_submit.status_code == 404
    theirs = b.client.http.post(f"{base}/qualify/attempts/{a.attempt}/submit", data=answers)
    _same(theirs, missing_submit, "B submits A's attempt")
    # Anonymous: sent to sign in whether the attempt or test exists or not.
    for path in (
        f"/qualify/attempts/{a.attempt}",
        f"/qualify/attempts/{made_up}",
        f"/qualify/{world.test_id}",
        f"/qualify/{made_up}",
        f"/qualify/{world.test_id}/media/x.png",
        f"/qualify/{made_up}/media/x.png",
    ):
        _to_signin(requests.get(base + path, allow_redirects=False), path)
    for path in (f"/qualify/{world.test_id}/start", f"/qualify/{made_up}/start"):
        anonymous = requests.Session()
        signin_token = csrf_of(anonymous.get(base + "/signin"))
        _to_signin(
            anonymous.post(base + path, data={"csrf_token": signin_token}, allow_redirects=False), path
        )
    with session_scope(requester_sessions) as session:
        attempt = session.get(QualificationAttempt, a.attempt)
        assert attempt is not None and attempt.submitted_at is None and attempt.score is None
    assert _attempts(requester_sessions, world.test_id) == before  # none started by the tampering
    assert a.client.get(f"/qualify/attempts/{a.attempt}").status_code == 200  # A's own opens


def test_campaign_pages_of_another_assignment(world: World, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    a, b = world.a, world.b
    base = world.url
    made_up = {**a.page, "assignmentId": "3" + uuid.uuid4().hex[:29].upper()}
    mixes = [
        {**a.page, "workerId": b.page["workerId"]},
        {**a.page, "turkSubmitTo": b.page["turkSubmitTo"]},
        {**b.page, "assignmentId": a.page["assignmentId"]},
        {**a.page, "turkSubmitTo": _capability_altered(a.page["turkSubmitTo"])},
    ]
    anonymous = requests.Session()
    people = {
        "B": (b.client.http, csrf_of(b.client.get("/"))),
        "anonymous": (anonymous, csrf_of(anonymous.get(f"{base}/signin"))),
    }
    answers = {"rating-0": "1", "rating-1": "1", "rating-2": "1"}
    for who, (http, token) in people.items():
        missing = http.get(f"{base}/tasks/hit", params=made_up)
        missing_submit = http.post(f"{base}/tasks/submit", data={**made_up, **answers, "csrf_token": token})
        assert missing.status_code == missing_submit.status_code == 403, who
        for params in mixes:
            _same(http.get(f"{base}/tasks/hit", params=params), missing, f"{who}: page {params}")
            submitted = http.post(f"{base}/tasks/submit", data={**params, **answers, "csrf_token": token})
            _same(submitted, missing_submit, f"{who}: submit {params}")
            for route in ("make", "shown"):
                refused = http.post(f"{base}/tasks/heatmaps/{route}", data={**params, "prompt": "a cat"})
                assert refused.status_code == 403, (who, route, params)
    # A's pictures under B's assignment, or made-up tags: one 404 for all.
    page = a.client.http.get(f"{base}/tasks/hit", params=a.page)
    assert page.status_code == 200
    pictures = re.findall(r'src="(/tasks/media/[^"]+)"', page.text)
    assert pictures
    picture = pictures[0].replace("&amp;", "&")
    assert requests.get(base + picture).status_code == 200  # the URL is the page's: anyone holding it
    missing_picture = requests.get(f"{base}/tasks/media/2000000000/0/{'A' * 24}")
    assert missing_picture.status_code == 404
    path, _, query = picture.partition("?")
    for guess in (
        f"{path}?a={b.page['assignmentId']}",
        f"{path[:-2]}AA?{query}",
        f"{path}",
    ):
        _same(requests.get(base + guess), missing_picture, guess)
    with session_scope(requester_sessions) as session:
        stored = session.scalar(select(Submission).where(Submission.assignment_id == a.page["assignmentId"]))
        assert stored is None


def test_made_up_public_ids_change_nothing(world: World, market_sessions) -> None:  # type: ignore[no-untyped-def]
    """HIT type and qualification type ids are the marketplace's public listing: a made-up one is a 404
    (or, for an accept, a message), and takes or requests nothing."""
    b = world.b
    base = world.url
    token = csrf_of(b.client.get("/"))
    made_up = "3" + uuid.uuid4().hex[:29].upper()

    def held() -> int:
        with session_scope(market_sessions) as session:
            return int(
                session.scalar(
                    select(func.count())
                    .select_from(Assignment)
                    .where(Assignment.worker_id == b.client.worker_id)
                )
                or 0
            )

    before = held()
    taken = b.client.http.post(
        f"{base}/groups/{made_up}/accept", data={"csrf_token": token}, allow_redirects=False
    )
    assert taken.status_code == 302 and held() == before
    missing = b.client.get(f"/qualifications/{made_up}")
    assert missing.status_code == 404
    for path in (f"/qualifications/{made_up}/request", f"/qualifications/{made_up}/test/start"):
        _same(b.client.http.post(base + path, data={"csrf_token": token}), missing, path)
    _same(b.client.get(f"/qualifications/{made_up}/test"), missing, "test page")
    for path in (f"/qualifications/{made_up}", f"/qualifications/{made_up}/test", "/qualifications"):
        _to_signin(requests.get(base + path, allow_redirects=False), path)
