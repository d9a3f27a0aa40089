"""Launching a campaign from the dashboard: a zip uploaded, checked, previewed and launched once.

Hostile zips (a path out of the folder, an absolute path, a symlink, a zip
bomb, too many members, not a zip, an empty one, no campaign file, a file
naming a path outside the zip) and a campaign file with an unknown key each
get a 400 page that says why, and nothing is stored. A QA reviewer gets 403.
A launch posted twice (at once, and again later) makes one campaign; a
launch refused keeps the upload; one stopped half way (the marketplace goes
away) is finished from the campaign's page.

The launching server is a second app on the session's databases with
marketplace keys of its own (the session's live server has none), publishing
to the live server's marketplace; its HIT pages are the live server's.
"""

from __future__ import annotations

import io
import json
import stat
import threading
import time
import uuid
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from bs4 import BeautifulSoup
from sqlalchemy import func, select

from demo.runner import RunningServer, serve_in_thread
from demo.tasks import get_demo_task
from hits.db import session_scope
from hits.market.accounts import IssuedKey
from hits.market.models import HIT
from hits.requester.tables.campaigns import Campaign, PublishedHIT, ReviewAction, StaffUser
from server import create_app
from server.requester.dashboard.uploads import MAX_MEMBERS, MAX_UNPACKED_BYTES, uploads_dir
from tests.conftest import boto3_client, new_requester
from tests.server.test_dashboard_roles import Dashboard, make_user

TEMPLATE = "target"


@dataclass
class Launcher:
    """A server that publishes with ``key``'s marketplace account, and its requester's boto3 client."""

    url: str
    key: IssuedKey
    mturk: Any


def launching_server(settings, market_url: str, key: IssuedKey) -> Iterator[Launcher]:  # type: ignore[no-untyped-def]
    app = create_app(
        settings=settings.with_overrides(
            mturk_endpoint_url=market_url,
            mturk_access_key_id=key.access_key_id,
            mturk_secret_access_key=key.secret_access_key,
        )
    )
    running = serve_in_thread(app)
    yield Launcher(running.url, key, boto3_client(market_url, key))
    running.stop()


@pytest.fixture
def launcher(settings, live_server, market_sessions) -> Iterator[Launcher]:  # type: ignore[no-untyped-def]
    yield from launching_server(settings, live_server.url, new_requester(market_sessions, "100.00"))


def write_campaign(folder: Path, name: str, *, hits: int = 2, **changes: Any) -> dict[str, Any]:
    """A target campaign's files in ``folder`` (demo data: items, gold, media); its truth."""
    task = get_demo_task(TEMPLATE)
    truth = task.write_data(folder, hits * task.items_per_hit, max(4, hits * task.gold_per_hit), len(name))
    spec = {
        "name": name,
        "template": TEMPLATE,
        "title": f"{task.title} {name}",
        "description": task.description,
        "reward": "0.10",
        "budget": "10.00",
        "assignments_per_hit": 2,
        "items_per_hit": task.items_per_hit,
        "gold_per_hit": task.gold_per_hit,
        "items": "items.jsonl",
        "gold": "gold.jsonl",
        "media_dir": "media",
        "template_options": task.template_options,
        "quality": task.quality,
        "auto_approval_delay_seconds": 3600,
        "seed": 7,
        **changes,
    }
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return dict(truth)


def zip_of(folder: Path, top: str = "") -> bytes:
    """``folder`` as a zip, its files at the root or under ``top/``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, (Path(top) / path.relative_to(folder)).as_posix())
    return out.getvalue()


def with_member(data: bytes, info: zipfile.ZipInfo | str, content: bytes = b"x") -> bytes:
    """``data`` (a zip) with one more member."""
    out = io.BytesIO(data)
    with zipfile.ZipFile(out, "a") as archive:
        archive.writestr(info, content)
    return out.getvalue()


def sign_in(base: str, requester_sessions, role: str, key: str | None = None) -> Dashboard:  # type: ignore[no-untyped-def]
    return Dashboard(base, make_user(requester_sessions, role, access_key=key))


def upload(dash: Dashboard, data: bytes, filename: str = "campaign.zip") -> requests.Response:
    return dash.http.post(
        dash.base + "/dashboard/launch",
        data={"csrf_token": dash.token("/dashboard/launch")},
        files={"campaign_zip": (filename, data, "application/zip")},
    )


def stored_uploads(settings) -> set[str]:  # type: ignore[no-untyped-def]
    folder = uploads_dir(settings.var_dir)
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def text_of(response: requests.Response) -> str:
    return " ".join(BeautifulSoup(response.text, "html.parser").get_text(" ").split())


def campaigns_named(requester_sessions, name: str) -> int:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        return int(session.scalar(select(func.count()).where(Campaign.name == name)) or 0)


def _symlink(good: bytes) -> bytes:
    info = zipfile.ZipInfo("media/passwd")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return with_member(good, info, b"/etc/passwd")


def _bomb(good: bytes) -> bytes:
    out = io.BytesIO(good)
    with (
        zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open("media/zeros.png", "w", force_zip64=True) as member,
    ):
        block = bytes(2**20)
        for _ in range(MAX_UNPACKED_BYTES // 2**20 + 1):
            member.write(block)
    assert len(out.getvalue()) < 2 * 2**20  # a small zip that unpacks past the cap
    return out.getvalue()


def _many(good: bytes) -> bytes:
    out = io.BytesIO(good)
    with zipfile.ZipFile(out, "a") as archive:
        for n in range(MAX_MEMBERS):
            archive.writestr(f"media/empty-{n}.txt", b"")
    return out.getvalue()


def _empty(_: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w"):
        pass
    return out.getvalue()


def _without_campaign_file(good: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(good)) as source, zipfile.ZipFile(out, "w") as archive:
        for info in source.infolist():
            if not info.filename.endswith("campaign.yaml"):
                archive.writestr(info, source.read(info))
    return out.getvalue()


HOSTILE = {
    "path traversal": (lambda good: with_member(good, "../escaped.txt"), "reaches out of its folder"),
    "traversal inside": (lambda good: with_member(good, "media/../../up.txt"), "reaches out of its folder"),
    "absolute path": (lambda good: with_member(good, "/tmp/absolute.txt"), "an absolute path"),
    "symlink member": (_symlink, "a symbolic link, 'media/passwd'"),
    "zip bomb": (_bomb, f"unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MB"),
    "too many members": (_many, f"at most {MAX_MEMBERS} are accepted"),
    "not a zip": (lambda _: b"name: not-a-zip\n", "is not a zip archive"),
    "empty zip": (_empty, "the zip is empty"),
    "no campaign.yaml": (_without_campaign_file, "holds no campaign.yaml"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_zip_gets_a_clear_400_and_nothing_is_stored(
    tmp_path, settings, launcher, requester_sessions, case: str
) -> None:
    name = f"hostile-{uuid.uuid4().hex[:6]}"
    write_campaign(tmp_path, name)
    make, says = HOSTILE[case]
    dash = sign_in(launcher.url, requester_sessions, "requester", launcher.key.access_key_id)
    before = stored_uploads(settings)
    refused = upload(dash, make(zip_of(tmp_path)))
    assert refused.status_code == 400, case
    assert says in text_of(refused), text_of(refused)
    assert "Check this campaign" in text_of(refused)  # the form is there to try again
    assert stored_uploads(settings) == before
    assert campaigns_named(requester_sessions, name) == 0
    assert not (settings.var_dir.parent / "escaped.txt").exists()


@pytest.mark.parametrize(
    ("case", "change", "field", "says"),
    [
        ("unknown key", {"colour": "red"}, "colour", "not a key of this file"),
        ("items outside the zip", {"items": "../../../../etc/passwd"}, "items", "is outside the zip"),
        ("media outside the zip", {"media_dir": "/etc"}, "media_dir", "is outside the zip"),
    ],
)
def test_a_campaign_file_error_names_file_line_and_field(
    tmp_path, settings, launcher, requester_sessions, case: str, change: dict[str, str], field: str, says: str
) -> None:
    name = f"badkey-{uuid.uuid4().hex[:6]}"
    write_campaign(tmp_path, name, **change)
    line = next(
        n
        for n, text in enumerate((tmp_path / "campaign.yaml").read_text().splitlines(), 1)
        if text.startswith(f"{field}:")
    )
    dash = sign_in(launcher.url, requester_sessions, "admin")
    before = stored_uploads(settings)
    refused = upload(dash, zip_of(tmp_path, top="my-campaign"))
    assert refused.status_code == 400, case
    rows = BeautifulSoup(refused.text, "html.parser").select("#error-list tbody tr")
    cells = [[td.get_text() for td in row.find_all("td")] for row in rows]
    assert len(cells) == 1, cells
    file, at, named, message = cells[0]
    assert (file, at, named) == ("my-campaign/campaign.yaml", str(line), field)
    assert says in message and str(settings.var_dir) not in refused.text
    assert stored_uploads(settings) == before
    assert campaigns_named(requester_sessions, name) == 0


def test_a_qa_reviewer_gets_403_and_no_launch_link(tmp_path, settings, launcher, requester_sessions) -> None:
    name = f"qa-{uuid.uuid4().hex[:6]}"
    write_campaign(tmp_path, name)
    reviewer = sign_in(launcher.url, requester_sessions, "qa")
    assert "Launch a campaign" not in reviewer.home()
    assert reviewer.get("/dashboard/launch").status_code == 403
    before = stored_uploads(settings)
    refused = reviewer.http.post(
        launcher.url + "/dashboard/launch",
        data={"csrf_token": reviewer.token()},
        files={"campaign_zip": ("c.zip", zip_of(tmp_path), "application/zip")},
    )
    assert refused.status_code == 403 and stored_uploads(settings) == before

    # Another user's upload is as missing as one that never was, to a requester and a reviewer alike.
    owner = sign_in(launcher.url, requester_sessions, "admin")
    assert "Launch a campaign" in owner.home()
    checked = upload(owner, zip_of(tmp_path))
    assert checked.status_code == 200, text_of(checked)
    path = checked.url.removeprefix(launcher.url)
    other = sign_in(launcher.url, requester_sessions, "requester", launcher.key.access_key_id)
    assert other.get(path).status_code == 404
    assert other.post(path + "/launch").status_code == 404
    assert reviewer.get(path).status_code == 403
    assert campaigns_named(requester_sessions, name) == 0


def test_the_check_shows_the_plan_and_a_preview_without_gold(tmp_path, launcher, requester_sessions) -> None:
    name = f"check-{uuid.uuid4().hex[:6]}"
    write_campaign(tmp_path, name)
    dash = sign_in(launcher.url, requester_sessions, "requester", launcher.key.access_key_id)
    checked = upload(dash, zip_of(tmp_path, top=name))
    assert checked.status_code == 200
    page = BeautifulSoup(checked.text, "html.parser")
    plan = {
        dt.get_text(): dd.get_text()
        for dt, dd in zip(page.select("#plan dt"), page.select("#plan dd"), strict=True)
    }
    assert plan["HITs"] == "2" and plan["total cost"] == "$0.48" and plan["budget"] == "$10.00"
    assert page.select_one("#launch-button").get_text() == "Launch: publish 2 HITs for $0.48"  # type: ignore[union-attr]
    frame = page.select_one("iframe#preview")
    assert frame is not None and frame.get("title")
    preview = dash.get(str(frame["src"]))
    assert preview.status_code == 200
    shown = BeautifulSoup(preview.text, "html.parser")
    assert len(shown.select("fieldset.target-item")) == 6  # 4 items and 2 gold, alike
    assert "gold" not in preview.text.lower()
    for img in shown.select("fieldset.target-item img"):
        picture = dash.get(f"{frame['src']}/../{img['src']}".replace("/preview/../", "/"))
        assert picture.status_code == 200 and picture.headers["Content-Type"] == "image/png"
    assert campaigns_named(requester_sessions, name) == 0  # nothing stored before the launch


def test_a_double_launch_makes_one_campaign(tmp_path, launcher, requester_sessions) -> None:
    name = f"double-{uuid.uuid4().hex[:6]}"
    write_campaign(tmp_path, name)
    dash = sign_in(launcher.url, requester_sessions, "requester", launcher.key.access_key_id)
    checked = upload(dash, zip_of(tmp_path))
    launch = checked.url.removeprefix(launcher.url) + "/launch"
    token = dash.token()
    with ThreadPoolExecutor(3) as pool:
        posts = list(
            pool.map(lambda _: dash.http.post(launcher.url + launch, data={"csrf_token": token}), range(3))
        )
    again = dash.post(launch)
    for response in [*posts, again]:
        assert response.status_code == 200 and response.url.startswith(launcher.url + "/dashboard/campaigns/")
        assert name in text_of(response)
    assert "running: 2 HITs published" in " ".join(text_of(r) for r in posts)
    assert campaigns_named(requester_sessions, name) == 1
    listed = launcher.mturk.list_hits(MaxResults=100)["HITs"]
    assert len([h for h in listed if h["Title"].endswith(name)]) == 2
    with session_scope(requester_sessions) as session:
        campaign = session.scalar(select(Campaign).where(Campaign.name == name))
        assert campaign is not None and campaign.status == "running"
        assert campaign.access_key_id == launcher.key.access_key_id
        logged = session.execute(
            select(ReviewAction.action, StaffUser.username)
            .join(StaffUser, StaffUser.id == ReviewAction.staff_user_id)
            .where(ReviewAction.campaign_id == campaign.id)
        ).all()
    assert [action for action, _ in logged] == ["campaign launch"]
    assert dash.get("/dashboard/audit").text.count("campaign launch") >= 1


def test_a_taken_name_is_refused_and_the_upload_kept(tmp_path, launcher, requester_sessions) -> None:
    name = f"taken-{uuid.uuid4().hex[:6]}"
    write_campaign(tmp_path, name)
    dash = sign_in(launcher.url, requester_sessions, "admin")
    first = upload(dash, zip_of(tmp_path))
    assert dash.post(first.url.removeprefix(launcher.url) + "/launch").status_code == 200
    second = upload(dash, zip_of(tmp_path))
    path = second.url.removeprefix(launcher.url)
    refused = dash.post(path + "/launch")
    assert refused.status_code == 409
    assert f"a campaign named '{name}' already exists" in text_of(refused)
    assert dash.get(path).status_code == 200  # kept, to rename and try again
    assert campaigns_named(requester_sessions, name) == 1


def test_over_budget_shows_no_button_and_is_refused(tmp_path, launcher, requester_sessions) -> None:
    name = f"budget-{uuid.uuid4().hex[:6]}"
    write_campaign(tmp_path, name, budget="0.30")
    dash = sign_in(launcher.url, requester_sessions, "admin")
    checked = upload(dash, zip_of(tmp_path))
    assert checked.status_code == 200
    assert "over budget $0.18" in text_of(checked) and "launch-button" not in checked.text
    refused = dash.post(checked.url.removeprefix(launcher.url) + "/launch")
    assert refused.status_code == 400 and "Raise the budget" in text_of(refused)
    assert campaigns_named(requester_sessions, name) == 0


def stop_after(server: RunningServer, market_sessions, requester_id: str, hits: int) -> threading.Thread:  # type: ignore[no-untyped-def]
    """Stop ``server`` once the requester has ``hits`` HITs: the marketplace goes away mid-launch."""

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with session_scope(market_sessions) as session:
                count = session.scalar(
                    select(func.count()).select_from(HIT).where(HIT.requester_id == requester_id)
                )
            if (count or 0) >= hits:
                server.stop()
                return
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_launch_stopped_half_way_is_finished_from_the_campaign_page(
    tmp_path, settings, live_server, requester_sessions, market_sessions
) -> None:
    """The marketplace goes away after the first HIT; the campaign's page publishes the rest."""
    name = f"half-{uuid.uuid4().hex[:6]}"
    hits = 8
    write_campaign(tmp_path, name, hits=hits)
    key = new_requester(market_sessions, "100.00")
    doomed = serve_in_thread(create_app(settings=settings))  # a marketplace on the same databases
    cut_off = launching_server(settings, doomed.url, key)
    launcher = next(cut_off)
    dash = sign_in(launcher.url, requester_sessions, "requester", key.access_key_id)
    checked = upload(dash, zip_of(tmp_path))
    watcher = stop_after(doomed, market_sessions, key.requester_id, 1)
    stopped = dash.post(checked.url.removeprefix(launcher.url) + "/launch")
    watcher.join(10)
    assert stopped.status_code == 200 and "/dashboard/campaigns/" in stopped.url
    published = len([h for h in live_server_hits(live_server.url, key) if h["Title"].endswith(name)])
    assert 1 <= published < hits
    said = text_of(stopped)
    assert f"Publishing stopped with {published} of {hits} HITs published" in said, said
    assert "half-published" in said and f"{hits - published} of its {hits} HITs are not published yet" in said
    next(cut_off, None)

    # The marketplace is back (the live server, with the same keys): the page publishes the rest.
    back = launching_server(settings, live_server.url, key)
    again = next(back)
    campaign_path = stopped.url.removeprefix(launcher.url)
    page = dash.http.get(again.url + campaign_path)
    assert "Publish the remaining HITs" in page.text
    token = BeautifulSoup(page.text, "html.parser").select_one("#publish-rest input[name=csrf_token]")
    assert token is not None
    done = dash.http.post(again.url + campaign_path + "/publish-rest", data={"csrf_token": token["value"]})
    next(back, None)
    assert done.status_code == 200
    assert (
        f"running: {hits - published} HIT" in text_of(done) and "Publish the remaining HITs" not in done.text
    )
    assert len([h for h in live_server_hits(live_server.url, key) if h["Title"].endswith(name)]) == hits
    with session_scope(requester_sessions) as session:
        campaign = session.scalar(select(Campaign).where(Campaign.name == name))
        assert campaign is not None and campaign.status == "running"
        pending = session.scalar(
            select(func.count()).where(
                PublishedHIT.campaign_id == campaign.id, PublishedHIT.mturk_hit_id.is_(None)
            )
        )
        actions = session.scalars(
            select(ReviewAction.action)
            .where(ReviewAction.campaign_id == campaign.id)
            .order_by(ReviewAction.id)
        ).all()
    assert pending == 0 and actions == ["campaign launch", "campaign publish the rest"]


def live_server_hits(url: str, key: IssuedKey) -> list[dict[str, Any]]:
    client = boto3_client(url, key)
    return [hit for page in client.get_paginator("list_hits").paginate() for hit in page["HITs"]]


def test_the_preview_shows_no_file_from_outside_the_media_folder(
    tmp_path, launcher, requester_sessions
) -> None:
    """An item naming ``../campaign.yaml`` as its picture gets none: the preview copies nothing from there."""
    name = f"peek-{uuid.uuid4().hex[:6]}"
    write_campaign(tmp_path, name)
    items = (tmp_path / "items.jsonl").read_text().splitlines()
    first = json.loads(items[0])
    first["item"]["image"] = "../campaign.yaml"
    (tmp_path / "items.jsonl").write_text("\n".join([json.dumps(first), *items[1:]]) + "\n")
    dash = sign_in(launcher.url, requester_sessions, "admin")
    checked = upload(dash, zip_of(tmp_path))
    assert checked.status_code == 200, text_of(checked)
    assert "The items name the picture ../campaign.yaml, which the media folder does not hold" in text_of(
        checked
    )
    preview = dash.get(checked.url.removeprefix(launcher.url) + "/preview")
    assert preview.status_code == 200
    for img in BeautifulSoup(preview.text, "html.parser").select("fieldset.target-item img"):
        if img["src"]:
            picture = dash.get(checked.url.removeprefix(launcher.url) + "/" + str(img["src"]))
            assert name.encode() not in picture.content


def test_the_preview_links_to_its_practice_pages_with_their_answers(
    tmp_path, launcher, requester_sessions
) -> None:  # type: ignore[no-untyped-def]
    name = f"practice-{uuid.uuid4().hex[:6]}"
    write_campaign(tmp_path, name)
    gold = json.loads((tmp_path / "gold.jsonl").read_text().splitlines()[0])
    practice = {
        "id": "practice-1",
        "item": {**gold["item"], "expression": "the thing nearest the left edge"},
        "answer": gold["answer"],
        "explanation": "Read the expression *before* looking at the box.",
    }
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    spec["training"] = [practice]
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec))
    dash = sign_in(launcher.url, requester_sessions, "requester", launcher.key.access_key_id)
    checked = upload(dash, zip_of(tmp_path, top=name))
    assert checked.status_code == 200 and "1 practice item" in checked.text
    frame = BeautifulSoup(checked.text, "html.parser").select_one("iframe#preview")
    assert frame is not None
    preview = BeautifulSoup(dash.get(str(frame["src"])).text, "html.parser")
    link = preview.select_one(".guidance-practice a")
    assert link is not None and link["href"] == "practice/0"
    answered = dash.get(f"{str(frame['src']).rsplit('/', 1)[0]}/practice/0")
    assert answered.status_code == 200
    assert "<em>before</em>" in answered.text and "The right answer" in answered.text
    for img in BeautifulSoup(answered.text, "html.parser").select("fieldset img"):
        picture = dash.get(f"{str(frame['src']).rsplit('/', 1)[0]}/practice/{img['src']}")
        assert picture.status_code == 200 and picture.headers["Content-Type"] == "image/png"
    assert dash.get(f"{str(frame['src']).rsplit('/', 1)[0]}/practice/1").status_code == 404
    assert campaigns_named(requester_sessions, name) == 0
