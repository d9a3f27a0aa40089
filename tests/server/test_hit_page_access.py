"""HIT pages against a cheating worker: made-up ids, another's assignment, comparing pages, foreign relays.

A HIT page (``/tasks/hit``) is served for an assignment only with the
capability the marketplace put in ``turkSubmitTo`` for exactly that
assignment, worker and HIT; answers are taken (``/tasks/submit``) on the same
condition and relayed only to that ``turkSubmitTo``. Every assignment of a HIT
shows the same items, so comparing pages tells nothing about gold.
"""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from bs4 import BeautifulSoup, Tag
from sqlalchemy import func, select

from demo.crowd import PROFILES, Bot
from demo.runner import serve_in_thread
from hits.db import session_scope
from hits.requester.mturk import Marketplace
from hits.requester.tables.campaigns import Campaign, GoldExposure, PublishedHIT, Submission
from server import create_app
from tests.helpers import hidden_fields, launch_demo_campaign
from tests.server.test_worker_site import accept, accept_rating_hit, hit_of
from tests.server.worker_helpers import WorkerClient, accept_framed, soup


def _params(src: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(src).query).items()}


def _form(html: str) -> dict[str, str]:
    form = BeautifulSoup(html, "html.parser").find("form", id="task-form")
    assert isinstance(form, Tag), html[:300]
    return hidden_fields(form)


def _items(html: str, base: str) -> list[str]:
    """What a worker can compare between pages: each slot's text and the bytes of its pictures, in order."""
    page = BeautifulSoup(html, "html.parser")
    return [
        " ".join(slot.get_text(" ", strip=True).split())
        + "|"
        + ",".join(
            hashlib.sha256(requests.get(base + str(i["src"])).content).hexdigest()
            for i in slot.find_all("img")
        )
        for slot in page.find_all("fieldset", class_="pair")
    ]


def _traces(requester_sessions, campaign_id: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        exposures = session.scalar(
            select(func.count()).select_from(GoldExposure).where(GoldExposure.campaign_id == campaign_id)
        )
        submissions = session.scalar(
            select(func.count())
            .select_from(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id)
        )
    return int(exposures or 0), int(submissions or 0)


def _preview_url(base: str, hit_id: str) -> str:
    """The preview frame the worker site gives a worker who may preview the HIT."""
    viewer = WorkerClient(base, "viewer")
    frame = soup(viewer.get(f"/hits/{hit_id}")).find("iframe", id="hit-frame")
    assert isinstance(frame, Tag)
    return str(frame["src"])


def _answers() -> dict[str, str]:
    return {f"rating-{i}": "3" for i in range(3)}


def test_made_up_ids_get_neither_a_page_nor_a_stored_answer(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, _ = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="madeup-1"
    )
    hit_id = hit_of(requester_sessions, campaign_id)
    browser = requests.Session()
    preview = browser.get(_preview_url(live_server.url, hit_id))
    assert preview.status_code == 200  # anyone the worker site lets preview may
    csrf = _form(preview.text)["csrf_token"]
    made_up = [
        {"assignmentId": "MADEUP00000000000001", "workerId": "ANOBODY1", "turkSubmitTo": live_server.url},
        {"assignmentId": "MADEUP00000000000002", "workerId": "ANOBODY2"},
        {
            "assignmentId": "MADEUP00000000000003",
            "workerId": "ANOBODY3",
            "turkSubmitTo": live_server.url + "/s/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        },
    ]
    for params in made_up:
        page = browser.get(live_server.url + "/tasks/hit", params={"hitId": hit_id, **params})
        assert page.status_code == 403, page.text[:300]
        assert "Open the HIT from the worker site" in page.text
        posted = browser.post(
            live_server.url + "/tasks/submit",
            data={"csrf_token": csrf, "hitId": hit_id, **params, **_answers()},
        )
        assert posted.status_code == 403
    # Nothing was recorded for workers and assignments that do not exist.
    assert _traces(requester_sessions, campaign_id) == (0, 0)


def test_another_workers_assignment_is_refused_whatever_is_mixed_in(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name="theirs-1"
    )
    with session_scope(requester_sessions) as session:
        first_hit, second_hit = session.scalars(
            select(PublishedHIT.mturk_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id)
            .order_by(PublishedHIT.id)
        ).all()
    alice = Bot(live_server.url, "alice-theirs", PROFILES["diligent"], truth)
    mallory = Bot(live_server.url, "mallory-theirs", PROFILES["diligent"], truth)
    alice.sign_in()
    mallory.sign_in()
    _, alice_src = accept(alice, live_server.url, first_hit)
    _, mallory_src = accept(mallory, live_server.url, first_hit)
    a, m = _params(alice_src), _params(mallory_src)
    assert alice.http.get(alice_src).status_code == 200
    assert mallory.http.get(mallory_src).status_code == 200
    attempts = [
        {**m, "assignmentId": a["assignmentId"]},  # Alice's assignment, Mallory's own capability
        {**m, "assignmentId": a["assignmentId"], "workerId": a["workerId"]},
        {**a, "turkSubmitTo": m["turkSubmitTo"]},
        {**a, "hitId": second_hit},  # Alice's capability spent on another HIT
        {**a, "workerId": m["workerId"]},
    ]
    for params in attempts:
        # Mallory is signed in and holds a real assignment of her own: neither helps her.
        assert mallory.http.get(live_server.url + "/tasks/hit", params=params).status_code == 403, params
    mallory_form = _form(mallory.http.get(mallory_src).text)
    for params in attempts:
        posted = mallory.http.post(
            live_server.url + "/tasks/submit", data={**mallory_form, **params, **_answers()}
        )
        assert posted.status_code == 403, params
    with session_scope(requester_sessions) as session:
        assert session.scalar(select(Submission).where(Submission.assignment_id == a["assignmentId"])) is None
        # Only the two real pages opened recorded what they showed.
        assert set(
            session.scalars(select(GoldExposure.worker_id).where(GoldExposure.campaign_id == campaign_id))
        ) == {
            a["workerId"],
            m["workerId"],
        }


def test_two_workers_comparing_their_pages_of_one_hit_learn_nothing_about_gold(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=3, name="compare-1", assignments_per_hit=3
    )
    hit_id = hit_of(requester_sessions, campaign_id)
    pages = []
    for name in ("ann-compare", "ben-compare", "cat-compare"):
        bot = Bot(live_server.url, name, PROFILES["diligent"], truth)
        bot.sign_in()
        _, src = accept(bot, live_server.url, hit_id)
        pages.append(_items(bot.http.get(src).text, live_server.url))
    preview = _items(requests.get(_preview_url(live_server.url, hit_id)).text, live_server.url)
    assert len(preview) == 3
    # Every assignment, and the preview, shows the same items in the same places: no position stands out.
    assert pages[0] == pages[1] == pages[2] == preview


def test_answers_are_relayed_only_to_the_marketplaces_own_turk_submit_to(
    tmp_path, live_server, market, requester_sessions
) -> None:
    hit = accept_rating_hit(tmp_path, market, requester_sessions, live_server.url, "relay-1", "relay")
    bot, campaign_id, src, assignment_id = hit.bot, hit.campaign_id, hit.src, hit.assignment_id
    form = _form(bot.http.get(src).text)
    capability = urlsplit(form["turkSubmitTo"]).path
    foreign = [
        "https://collector.example",
        "https://collector.example" + capability,
        live_server.url.replace("127.0.0.1", "localhost") + capability,
        form["turkSubmitTo"] + "/../../elsewhere",
    ]
    for target in foreign:
        posted = bot.http.post(
            live_server.url + "/tasks/submit", data={**form, "turkSubmitTo": target, **_answers()}
        )
        assert posted.status_code == 403, target
        assert "collector.example" not in posted.text
    assert _traces(requester_sessions, campaign_id)[1] == 0
    posted = bot.http.post(live_server.url + "/tasks/submit", data={**form, **_answers()})
    assert posted.status_code == 200
    handoff = BeautifulSoup(posted.text, "html.parser").find("form", id="handoff")
    assert isinstance(handoff, Tag)
    assert handoff["action"] == form["turkSubmitTo"] + "/mturk/externalSubmit"
    assert str(handoff["action"]).startswith(live_server.url + "/s/")
    with session_scope(requester_sessions) as session:
        stored = session.scalar(select(Submission).where(Submission.assignment_id == assignment_id))
        assert stored is not None and stored.worker_id == form["workerId"]


def test_media_urls_name_no_file_and_serve_only_what_a_page_shows(
    tmp_path, live_server, market, requester_sessions
) -> None:
    hit = accept_rating_hit(tmp_path, market, requester_sessions, live_server.url, "media-1", "media")
    bot, campaign_id, hit_id, src = hit.bot, hit.campaign_id, hit.hit_id, hit.src
    page = BeautifulSoup(bot.http.get(src).text, "html.parser")
    with session_scope(requester_sessions) as session:
        published = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id))
        assert published is not None
        names = [slot.payload["image"] for slot in published.slots] + [
            str(slot.gold_item.payload["image"]) for slot in published.slots if slot.gold_item
        ]
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        media_path = Path(campaign.spec["media_path"])
    images = [str(img["src"]) for img in page.find_all("img")]
    assert len(images) == 3
    for url in images:
        # A requester's file names (say gold/cat.png) would tell gold apart: the URL carries none.
        assert not any(name in url for name in names if name), url
        shown = requests.get(live_server.url + url)
        assert shown.status_code == 200 and shown.headers["Content-Type"] == "image/png"
        assert shown.content in {(media_path / name).read_bytes() for name in names if name}
        assert "sandbox" in shown.headers["Content-Security-Policy"]
    # A campaign whose media folder holds more than media (media_dir: "."): nothing but what a
    # page showed can be fetched, least of all the gold answers.
    (media_path / "gold.jsonl").write_text('{"answer": {"rating": 4}}\n')
    for guess in (
        f"/tasks/media/{campaign_id}/gold.jsonl",
        f"/tasks/media/{campaign_id}/{names[0]}",
        images[0][:-3] + ("AAA" if not images[0].endswith("AAA") else "BBB"),
    ):
        refused = requests.get(live_server.url + guess)
        assert refused.status_code == 404, guess
        assert b"rating" not in refused.content


def test_a_preview_needs_the_worker_sites_link(tmp_path, live_server, market, requester_sessions) -> None:
    # The worker site lets a worker preview only HITs whose preview they qualify for
    # (ActionsGuarded PreviewAndAccept); a HIT id from the listing must not get around that.
    campaign_id, _ = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="preview-1"
    )
    hit_id = hit_of(requester_sessions, campaign_id)
    bare = requests.get(live_server.url + "/tasks/hit", params={"hitId": hit_id})
    assert bare.status_code == 403 and "Open the HIT from the worker site" in bare.text
    with session_scope(requester_sessions) as session:
        other = session.scalar(select(PublishedHIT.mturk_hit_id).where(PublishedHIT.mturk_hit_id != hit_id))
    link = _preview_url(live_server.url, hit_id)
    assert requests.get(link).status_code == 200
    if other is not None:  # one HIT's preview link does not open another's
        assert requests.get(link.replace(hit_id, other)).status_code == 403


@pytest.fixture
def pages_elsewhere(settings, requester):  # type: ignore[no-untyped-def]
    """A marketplace on another host with its own secret (B), and HIT pages that publish to it (A)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    market_url = f"http://127.0.0.1:{port}"
    marketplace = serve_in_thread(
        create_app(settings=settings.with_overrides(secret_key="another-secret", public_url=market_url)),
        port=port,
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        pages_port = probe.getsockname()[1]
    pages_url = f"http://127.0.0.1:{pages_port}"
    pages = serve_in_thread(
        create_app(
            settings=settings.with_overrides(
                public_url=pages_url,
                mturk_endpoint_url=market_url,
                mturk_access_key_id=requester.access_key_id,
                mturk_secret_access_key=requester.secret_access_key,
            )
        ),
        port=pages_port,
    )
    yield (
        market_url,
        pages_url,
        Marketplace.connect(market_url, requester.access_key_id, requester.secret_access_key),
    )
    pages.stop()
    marketplace.stop()


def test_pages_for_a_marketplace_elsewhere_check_the_assignment_through_the_api(
    tmp_path, pages_elsewhere, requester_sessions
) -> None:
    market_url, pages_url, market = pages_elsewhere
    campaign_id, _ = launch_demo_campaign(
        tmp_path, market, requester_sessions, pages_url, hits=1, name="elsewhere-1", assignments_per_hit=2
    )
    hit_id = hit_of(requester_sessions, campaign_id)
    alice, a = accept_framed(market_url, hit_id, "alice-elsewhere")
    _, m = accept_framed(market_url, hit_id, "mallory-elsewhere")
    assert a["turkSubmitTo"].startswith(market_url + "/s/")
    assert requests.get(pages_url + "/tasks/hit", params=a).status_code == 200
    refused = [
        {**a, "assignmentId": "MADEUP00000000000009"},
        {**a, "workerId": m["workerId"]},
        {**m, "assignmentId": a["assignmentId"]},
        {**a, "turkSubmitTo": "https://collector.example/s/x"},
        {**a, "turkSubmitTo": pages_url},
    ]
    for params in refused:
        assert requests.get(pages_url + "/tasks/hit", params=params).status_code == 403, params
    # The preview, which a marketplace elsewhere cannot vouch for, is open as on MTurk.
    assert requests.get(pages_url + "/tasks/hit", params={"hitId": hit_id}).status_code == 200
    browser = requests.Session()  # the framed page's own cookie, for its CSRF token
    form = _form(browser.get(pages_url + "/tasks/hit", params=a).text)
    posted = browser.post(pages_url + "/tasks/submit", data={**form, **_answers()})
    assert posted.status_code == 200
    handoff = BeautifulSoup(posted.text, "html.parser").find("form", id="handoff")
    assert isinstance(handoff, Tag) and handoff["action"] == a["turkSubmitTo"] + "/mturk/externalSubmit"
    assert alice.worker_id == a["workerId"]
