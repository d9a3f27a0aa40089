"""Invitation links over real HTTP and boto3: sign-up or accept, the grant, limits, races, odd tokens."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta
from typing import Any

import pytest
import requests
from click.testing import CliRunner
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import func, select, update

from hits.db import session_scope, utcnow
from hits.market import invitations
from hits.market.errors import RequestError
from hits.market.models import Invitation, InvitationUse, Worker, WorkerQualification
from server.cli.main import main
from tests.conftest import boto3_client, new_requester
from tests.server.worker_helpers import MTURK_HTML, WorkerClient, create_hit, csrf_of, html_question, soup


def new_qualification(mturk: Any) -> str:
    return str(
        mturk.create_qualification_type(
            Name=f"Invited {uuid.uuid4().hex[:8]}",
            Description="Our own crowd.",
            QualificationTypeStatus="Active",
        )["QualificationType"]["QualificationTypeId"]
    )


def invite(market_sessions, requester_id: str, qtype: str, **options: Any) -> str:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        return invitations.create_invitations(session, requester_id, qtype, **options)[0].token


def stored(market_sessions, token: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(uses counted, use rows) of the invitation of ``token``."""
    with session_scope(market_sessions) as session:
        found = invitations.find(session, token)
        assert found is not None
        rows = session.scalar(select(func.count()).where(InvitationUse.invitation_id == found.id))
        return found.uses_count, int(rows or 0)


def holders(mturk: Any, qtype: str) -> dict[str, int]:
    listed = mturk.list_workers_with_qualification_type(QualificationTypeId=qtype, Status="Granted")
    return {q["WorkerId"]: q["IntegerValue"] for q in listed["Qualifications"]}


def sign_up(base: str, token: str, username: str, http: requests.Session | None = None) -> requests.Response:
    http = http or requests.Session()
    page = http.get(f"{base}/invite/{token}")
    assert page.status_code == 200, page.text
    return http.post(
        f"{base}/invite/{token}",
        data={
            "csrf_token": csrf_of(page),
            "username": username,
            "password": "a-long-password",
            "country": "GB",
        },
    )


def refusal_text(response: requests.Response) -> str:
    found = soup(response).find(id="invitation-refused")
    assert found is not None, response.text
    return found.get_text(strip=True)


def test_the_cli_prints_links_that_sign_a_worker_up_with_the_qualification(
    live_server, mturk, requester, market_sessions, settings
) -> None:
    qtype = new_qualification(mturk)
    env = {
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_PUBLIC_URL": live_server.url,
    }
    made = CliRunner().invoke(
        main, ["invite", "create", "--qualification", qtype, "--count", "2", "--value", "7"], env=env
    )
    assert made.exit_code == 0, made.output
    links = [line for line in made.stdout.splitlines() if line.startswith(live_server.url)]
    assert len(links) == 2 and len(set(links)) == 2
    token = links[0].rsplit("/", 1)[-1]
    with session_scope(market_sessions) as session:  # only the hash is kept
        hashes = set(
            session.scalars(select(Invitation.token_hash).where(Invitation.qualification_type_id == qtype))
        )
    assert invitations.hash_token(token) in hashes and token not in hashes

    http = requests.Session()
    page = http.get(links[0])
    assert page.status_code == 200 and soup(page).select_one("form#invitation-signup") is not None
    username = f"invited-{uuid.uuid4().hex[:8]}"
    done = sign_up(live_server.url, token, username, http)
    assert done.status_code == 200 and done.url.endswith("/me")
    assert f"Signed in as {username}" in done.text
    with session_scope(market_sessions) as session:
        worker = session.scalar(select(Worker).where(Worker.username == username))
        assert worker is not None and worker.country == "GB"
        worker_id = worker.id
    assert holders(mturk, qtype) == {worker_id: 7}
    assert (
        mturk.get_qualification_score(QualificationTypeId=qtype, WorkerId=worker_id)["Qualification"][
            "IntegerValue"
        ]
        == 7
    )
    assert stored(market_sessions, token) == (1, 1)
    # Used up now: a stranger is told so and can make nothing; the worker who took it is told they did.
    again = requests.get(links[0])
    assert again.status_code == 410 and "already been used" in refusal_text(again)
    refused = requests.post(links[0], data={"username": "late", "password": "a-long-password"})
    assert refused.status_code in (400, 410)  # without the form's CSRF token, or the link used up
    mine = http.get(links[0])
    assert mine.status_code == 200 and soup(mine).find(id="invitation-already") is not None


def test_a_signed_in_worker_accepts_and_a_second_click_counts_nothing(
    live_server, mturk, requester, market_sessions
) -> None:
    qtype = new_qualification(mturk)
    token = invite(market_sessions, requester.requester_id, qtype, uses=5, value=3)
    worker = WorkerClient(live_server.url, "known")
    page = worker.get(f"/invite/{token}")
    assert page.status_code == 200 and soup(page).select_one("form#invitation-signup") is None
    accepted = worker.post_form(page, "form#accept-invitation", {})
    assert accepted.status_code == 200 and "Invitation accepted" in accepted.text
    assert holders(mturk, qtype) == {worker.worker_id: 3}
    # The requester revokes it; clicking the link again neither counts a use nor grants it back.
    mturk.disassociate_qualification_from_worker(
        QualificationTypeId=qtype, WorkerId=worker.worker_id, Reason="x"
    )
    again = worker.post_form(page, "form#accept-invitation", {})
    assert again.status_code == 200 and "already accepted" in again.text
    assert holders(mturk, qtype) == {}
    assert stored(market_sessions, token) == (1, 1)


def test_an_invitation_admits_as_many_workers_as_it_allows(
    live_server, mturk, requester, market_sessions
) -> None:
    qtype = new_qualification(mturk)
    token = invite(market_sessions, requester.requester_id, qtype, uses=2)
    first, second = (sign_up(live_server.url, token, f"two-{uuid.uuid4().hex[:8]}") for _ in range(2))
    assert first.status_code == second.status_code == 200
    third_name = f"three-{uuid.uuid4().hex[:8]}"
    third = sign_up_refused(live_server.url, token, third_name)
    assert third.status_code == 410 and "already been used" in refusal_text(third)
    assert len(holders(mturk, qtype)) == 2 and stored(market_sessions, token) == (2, 2)
    with session_scope(market_sessions) as session:
        assert session.scalar(select(Worker).where(Worker.username == third_name)) is None


def sign_up_refused(base: str, token: str, username: str) -> requests.Response:
    """A sign-up posted with a real CSRF token (taken from another page) to a link that is no longer good."""
    http = requests.Session()
    token_page = http.get(f"{base}/signup")
    return http.post(
        f"{base}/invite/{token}",
        data={"csrf_token": csrf_of(token_page), "username": username, "password": "a-long-password"},
    )


def test_unknown_expired_and_used_up_links_are_refused_and_change_nothing(
    live_server, mturk, requester, market_sessions
) -> None:
    qtype = new_qualification(mturk)
    expired = invite(market_sessions, requester.requester_id, qtype, expires_at=utcnow() + timedelta(hours=1))
    with session_scope(market_sessions) as session:
        session.execute(
            update(Invitation)
            .where(Invitation.token_hash == invitations.hash_token(expired))
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    page = requests.get(f"{live_server.url}/invite/{expired}")
    assert page.status_code == 410 and "expired" in refusal_text(page)
    name = f"expired-{uuid.uuid4().hex[:8]}"
    assert sign_up_refused(live_server.url, expired, name).status_code == 410
    worker = WorkerClient(live_server.url, "late")
    accept_page = worker.get("/me")
    refused = worker.http.post(
        f"{live_server.url}/invite/{expired}/accept", data={"csrf_token": csrf_of(accept_page)}
    )
    assert refused.status_code == 410
    unknown = invitations.link("", "A" * 43)  # the shape of a token, but nobody's
    for path in (unknown, f"{unknown}/accept"):
        assert requests.get(live_server.url + path).status_code in (404, 405)
    assert (
        worker.http.post(
            live_server.url + unknown + "/accept", data={"csrf_token": csrf_of(accept_page)}
        ).status_code
        == 404
    )
    assert "not valid" in refusal_text(requests.get(live_server.url + unknown))
    with session_scope(market_sessions) as session:
        assert session.scalar(select(Worker).where(Worker.username == name)) is None
    assert holders(mturk, qtype) == {} and stored(market_sessions, expired) == (0, 0)


def test_a_weak_password_is_refused_with_the_sign_up_rules_and_uses_nothing(
    live_server, mturk, requester, market_sessions
) -> None:
    qtype = new_qualification(mturk)
    token = invite(market_sessions, requester.requester_id, qtype)
    http = requests.Session()
    page = http.get(f"{live_server.url}/invite/{token}")
    short = http.post(
        f"{live_server.url}/invite/{token}",
        data={"csrf_token": csrf_of(page), "username": "shorty-" + uuid.uuid4().hex[:6], "password": "short"},
    )
    assert short.status_code == 400 and "at least 8 characters" in short.text
    assert stored(market_sessions, token) == (0, 0)
    assert sign_up(live_server.url, token, f"fine-{uuid.uuid4().hex[:8]}").status_code == 200


def test_concurrent_redemptions_of_a_single_use_link_let_exactly_one_in(
    live_server, mturk, requester, market_sessions
) -> None:
    qtype = new_qualification(mturk)
    token = invite(market_sessions, requester.requester_id, qtype)
    workers = [WorkerClient(live_server.url, f"racer{i}") for i in range(6)]
    tokens = [csrf_of(w.get(f"/invite/{token}")) for w in workers]
    barrier = threading.Barrier(len(workers))
    statuses: list[int] = []

    def take(worker: WorkerClient, csrf: str) -> None:
        barrier.wait()
        response = worker.http.post(
            f"{live_server.url}/invite/{token}/accept", data={"csrf_token": csrf}, allow_redirects=False
        )
        statuses.append(response.status_code)

    threads = [threading.Thread(target=take, args=pair) for pair in zip(workers, tokens, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [302] + [410] * (len(workers) - 1)
    assert len(holders(mturk, qtype)) == 1 and stored(market_sessions, token) == (1, 1)


def test_concurrent_sign_ups_on_a_single_use_link_make_one_account(
    live_server, mturk, requester, market_sessions
) -> None:
    qtype = new_qualification(mturk)
    token = invite(market_sessions, requester.requester_id, qtype)
    names = [f"rush-{i}-{uuid.uuid4().hex[:6]}" for i in range(5)]
    sessions = [requests.Session() for _ in names]
    csrf = [csrf_of(s.get(f"{live_server.url}/invite/{token}")) for s in sessions]
    barrier = threading.Barrier(len(names))
    statuses: list[int] = []

    def join(http: requests.Session, name: str, csrf_token: str) -> None:
        barrier.wait()
        response = http.post(
            f"{live_server.url}/invite/{token}",
            data={"csrf_token": csrf_token, "username": name, "password": "a-long-password"},
            allow_redirects=False,
        )
        statuses.append(response.status_code)

    threads = [threading.Thread(target=join, args=args) for args in zip(sessions, names, csrf, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [302] + [410] * (len(names) - 1)
    with session_scope(market_sessions) as session:
        made = session.scalar(select(func.count()).select_from(Worker).where(Worker.username.in_(names)))
    assert made == 1 and len(holders(mturk, qtype)) == 1 and stored(market_sessions, token) == (1, 1)


def test_a_hit_requiring_the_qualification_admits_only_invited_workers(
    live_server, mturk, requester, market_sessions
) -> None:
    qtype = new_qualification(mturk)
    token = invite(market_sessions, requester.requester_id, qtype, uses=10)
    hit_id = create_hit(
        mturk,
        html_question(MTURK_HTML),
        MaxAssignments=2,
        QualificationRequirements=[
            {
                "QualificationTypeId": qtype,
                "Comparator": "Exists",
                "ActionsGuarded": "DiscoverPreviewAndAccept",
            }
        ],
    )
    invited, outsider = WorkerClient(live_server.url, "insider"), WorkerClient(live_server.url, "outsider")
    invited.post_form(invited.get(f"/invite/{token}"), "form#accept-invitation", {})
    assert soup(invited.get("/")).select_one(f'tr[data-hit-id="{hit_id}"]') is not None
    assert soup(outsider.get("/")).select_one(f'tr[data-hit-id="{hit_id}"]') is None
    assert outsider.get(f"/hits/{hit_id}").status_code == 403
    refused = outsider.http.post(
        f"{live_server.url}/hits/{hit_id}/accept", data={"csrf_token": csrf_of(outsider.get("/"))}
    )
    assert "/work/" not in refused.url
    work = invited.post_form(invited.get(f"/hits/{hit_id}"), f'form[action="/hits/{hit_id}/accept"]', {})
    assert "/work/" in work.url
    with session_scope(market_sessions) as session:
        granted = session.scalars(
            select(WorkerQualification.worker_id).where(WorkerQualification.qualification_type_id == qtype)
        ).all()
    assert granted == [invited.worker_id]


def test_only_the_types_owner_may_invite_and_limits_hold(live_server, market_sessions, requester) -> None:
    other = new_requester(market_sessions)
    qtype = new_qualification(boto3_client(live_server.url, other))
    with session_scope(market_sessions) as session:
        with pytest.raises(RequestError):
            invitations.create_invitations(session, requester.requester_id, qtype)
        for bad in ({"uses": 0}, {"count": 0}, {"count": 1001}, {"expires_at": utcnow() - timedelta(1)}):
            with pytest.raises(RequestError):
                invitations.create_invitations(session, other.requester_id, qtype, **bad)
        with pytest.raises(RequestError):  # a system type has no owner to invite for it
            invitations.create_invitations(session, other.requester_id, "000000000000000000L0")
    for text, ok in (
        ("7d", True),
        ("30m", True),
        ("2w", True),
        ("0d", False),
        ("7 years", False),
        ("", False),
    ):
        if ok:
            assert invitations.expiry_from(text) > utcnow()
        else:
            with pytest.raises(ValueError):
                invitations.expiry_from(text)


ODD = st.one_of(
    st.text(max_size=80),
    st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", min_size=43, max_size=43
    ),
    st.sampled_from(["", "..", "%00", "A" * 5000, "%2e%2e%2f", "%ff%fe", "\u202e", "a/b", "ø" * 43]),
)


@hypothesis_settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(token=ODD)
def test_odd_tokens_never_get_a_server_error(live_server, token: str) -> None:
    from urllib.parse import quote

    path = token if token.startswith("%") else quote(token, safe="")
    for method, suffix in (("GET", ""), ("POST", ""), ("POST", "/accept")):
        response = requests.request(
            method,
            f"{live_server.url}/invite/{path}{suffix}",
            data={"username": "x", "password": "y" * 9},
            allow_redirects=False,
            timeout=30,
        )
        assert response.status_code < 500, (token, method, suffix, response.status_code)


def test_a_campaign_requiring_the_qualification_is_open_to_invited_workers_only(
    tmp_path, live_server, mturk, market, requester, market_sessions, requester_sessions
) -> None:
    from demo.data import write_rating_demo
    from hits.requester.tables.campaigns import PublishedHIT
    from tests.helpers import publish_campaign_file, rating_campaign_spec

    qtype = new_qualification(mturk)
    token = invite(market_sessions, requester.requester_id, qtype, uses=3)
    name = f"panel{uuid.uuid4().hex[:6]}"
    write_rating_demo(tmp_path, items=4, gold=4, seed=3)
    requirement = {
        "QualificationTypeId": qtype,
        "Comparator": "Exists",
        "ActionsGuarded": "DiscoverPreviewAndAccept",
    }
    spec = rating_campaign_spec(name, qualification_requirements=[requirement])
    campaign_id = publish_campaign_file(tmp_path, spec, market, requester_sessions, live_server.url)
    with session_scope(requester_sessions) as session:
        hit_ids = session.scalars(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
    assert hit_ids and all(
        mturk.get_hit(HITId=h)["HIT"]["QualificationRequirements"][0]["QualificationTypeId"] == qtype
        for h in hit_ids
    )
    http = requests.Session()
    assert sign_up(live_server.url, token, f"panelist-{uuid.uuid4().hex[:6]}", http).status_code == 200
    outsider = WorkerClient(live_server.url, "outsider")
    title = f"Rate drawings {name}"
    assert title not in outsider.get("/").text
    assert all(outsider.get(f"/hits/{h}").status_code == 403 for h in hit_ids)
    listing = http.get(f"{live_server.url}/")
    rows = [row for row in soup(listing).select("tr.hit-group") if title in row.get_text()]
    assert len(rows) == 1
    form = rows[0].find("form")
    assert form is not None
    work = http.post(f"{live_server.url}{form['action']}", data={"csrf_token": csrf_of(listing)})
    assert "/work/" in work.url and work.status_code == 200
    assert outsider.worker_id not in holders(mturk, qtype) and len(holders(mturk, qtype)) == 1
