"""Issue 15, item 1: a test's media route serves the pictures its items show and nothing else.

A signed-in worker tries every spelling of a path that could reach the bank
file (which holds every answer), other files of its folder, files elsewhere on
the disk and another test's pictures, over raw HTTP so that no client tidies
the path first. Only the pictures the bank's items name are served, by their
served names, and an attempt's page carries no answers.
"""

from __future__ import annotations

import http.client
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from demo.judgment_media import judgment_items
from hits.db import session_scope
from qualification.bank import DEFAULT_BANK, load_bank
from qualification.service import publish_test
from tests.qualification.conftest import small_bank_data
from tests.server.worker_helpers import WorkerClient, csrf_of, soup


def raw_get(worker: WorkerClient, path: str) -> tuple[int, bytes]:
    """GET ``path`` exactly as written (no dot-segment removal, no re-quoting), with the worker's cookies."""
    parts = urlsplit(worker.base)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    cookie = "; ".join(f"{c.name}={c.value}" for c in worker.http.cookies)
    connection.putrequest("GET", path, skip_accept_encoding=True)
    connection.putheader("Cookie", cookie)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, body


@pytest.fixture
def copied_bank(tmp_path: Path) -> Path:
    """The default bank in a folder of its own, with a stray secret beside it."""
    folder = tmp_path / "bank-a"
    shutil.copytree(DEFAULT_BANK.parent, folder)
    (folder / "notes.txt").write_text("the answers are in default.yaml")
    return folder / "default.yaml"


def other_bank(tmp_path: Path) -> Path:
    """A second bank whose judgment pictures differ from the default bank's."""
    folder = tmp_path / "bank-b"
    data = small_bank_data()
    data["sections"].append(
        {"id": "judgment", "kind": "judgment", "instructions": "Pick", "sample": 1, "pass_threshold": 0}
    )
    data["items"] += judgment_items(folder / "pictures", 2, seed=99)
    folder.mkdir(exist_ok=True)
    (folder / "bank.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder / "bank.yaml"


def test_only_the_pictures_items_name_are_served_by_any_path_spelling(
    tmp_path: Path, copied_bank: Path, live_server, market, requester_sessions
) -> None:
    second = other_bank(tmp_path)
    with session_scope(requester_sessions) as session:
        test_id = publish_test(session, market, name="Media A", bank_path=copied_bank).id
        publish_test(session, market, name="Media B", bank_path=second)
    bank, theirs = load_bank(copied_bank), load_bank(second)
    worker = WorkerClient(live_server.url, "media")
    base = f"/qualify/{test_id}/media/"

    # Every picture an item shows is served by its served name, byte for byte.
    assert len(bank.media) == 22
    for name, file in bank.media.items():
        status, body = raw_get(worker, base + name)
        assert status == 200, name
        assert body == file.read_bytes()

    folder = copied_bank.parent
    one = next(iter(bank.media))
    their_name, their_file = next(iter(theirs.media.items()))
    spellings = [
        "default.yaml",
        "./default.yaml",
        "notes.txt",
        "media",
        "media/",
        "../default.yaml",
        "media/../default.yaml",
        "%2e%2e/default.yaml",
        "%2E%2E%2Fdefault.yaml",
        "media%2F..%2Fdefault.yaml",
        "media/%2e%2e/default.yaml",
        "..%5Cdefault.yaml",
        "media%5C..%5Cdefault.yaml",
        "..\\default.yaml",
        "/etc/passwd",
        "%2Fetc%2Fpasswd",
        "//etc/passwd",
        str(copied_bank),
        str(copied_bank).replace("/", "%2F"),
        "C:%5Cwindows%5Cwin.ini",
        one.upper(),
        one.replace(".png", ".PNG"),
        one[:-4],
        one + "/",
        one + "%00",
        their_name,
        str(their_file),
        f"../../{test_id + 1}/media/{their_name}",
        # The names the bank file uses for its pictures are paths, not served names.
        *(item.image for item in bank.items.values() if item.image),
        *(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()),
        *(p.name for p in folder.rglob("*") if p.is_file()),
    ]
    for spelling in spellings:
        status, body = raw_get(worker, base + spelling)
        # A NUL is refused before any view (server/errors.py): 400; every other spelling: 404.
        assert status == (400 if "%00" in spelling else 404), (spelling, status, body[:80])
        assert b"sp-001" not in body and b"explanation" not in body

    # The other test serves its own picture, but not the first test's.
    status, _ = raw_get(worker, f"/qualify/{test_id + 1}/media/{their_name}")
    assert status == 200
    assert raw_get(worker, f"/qualify/{test_id + 1}/media/{one}")[0] == 404


def test_an_attempt_page_carries_no_answers(
    copied_bank: Path, live_server, market, requester_sessions
) -> None:
    with session_scope(requester_sessions) as session:
        test_id = publish_test(session, market, name="No answers", bank_path=copied_bank).id
    bank = load_bank(copied_bank)
    worker = WorkerClient(live_server.url, "peek")
    intro = worker.get(f"/qualify/{test_id}")
    page = worker.http.post(f"{worker.base}/qualify/{test_id}/start", data={"csrf_token": csrf_of(intro)})
    assert page.status_code == 200
    html = page.text
    fieldsets = soup(page).select("#qualification-form fieldset")
    assert len(fieldsets) == 28
    for fieldset in fieldsets:
        radios = fieldset.select("input[type=radio]")
        item = bank.items[str(radios[0]["name"]).removeprefix("q-")]
        # Every choice is offered alike: none is marked, none is checked.
        assert {str(r["value"]) for r in radios} == {c.id for c in bank.choices(item)}
        assert not any(r.has_attr("checked") or r.has_attr("data-answer") for r in radios)
        if item.explanation:
            assert item.explanation not in html
        for img in fieldset.select("img"):
            name = str(img["src"]).rsplit("/", 1)[-1]
            assert name in bank.media and name != item.image
    assert "answer" not in html.lower().replace("answer every", "")
    assert "default.yaml" not in html
