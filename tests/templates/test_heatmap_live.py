"""Live heatmaps through the page's endpoint: slow and failing model servers, abuse, blinding.

A campaign compares a built-in model with models served over HTTP by a small
server in this test: one answers well, one too slowly, one with HTTP 500 and
one with a body that is no heatmap. The worker's requests go to
``/tasks/heatmaps/make`` with the capability the marketplace framed the page
with, exactly as the page's script sends them.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np
import pytest
import requests
import yaml
from bs4 import BeautifulSoup, Tag
from click.testing import CliRunner
from sqlalchemy import select

from demo.runner import RunningServer, serve_in_thread
from demo.tasks import save_png
from hits.db import session_scope
from hits.requester.campaigns.service import create_campaign, publish_campaign
from hits.requester.files.campaign import load_campaign_file
from hits.requester.heatmaps.providers import ImageSource, ModelSpec, Outcome, compute_all, provider_for
from hits.requester.tables.campaigns import Submission
from hits.requester.tables.heatmaps import HeatmapRequest
from hits.requester.templates.heatmap import QUESTIONS
from hits.requester.templates.heatmap.report import campaign_study, round_tables
from server import create_app
from server.cli.main import main
from server.requester.hit_pages.heatmap_views import NO_HEATMAP
from tests.helpers import name_a_model_in, pixels_only
from tests.server.worker_helpers import accept_framed, csrf_of

TIME_LIMIT = 1.5
# Far beyond the time limit, so that a loaded machine's slow answer is never mistaken for the slow model.
SLOW = 30.0
FRAME = ("assignmentId", "hitId", "workerId", "turkSubmitTo")


class ModelServer(BaseHTTPRequestHandler):
    """A model served elsewhere; the path says how it behaves."""

    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ModelServer.received.append({"path": self.path, **body})
        if self.path == "/slow":
            time.sleep(SLOW)
        if self.path == "/error":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"internal error")
            return
        payload: dict[str, Any] = {"heatmap": [[0, 1, 0], [0, 3, 1], [0, 0, 0]]}
        if self.path == "/flat":
            payload = {"heatmap": [1, 2, 3]}
        if self.path == "/nomember":
            payload = {"saliency": [[1]]}
        raw = b"this is not a heatmap" if self.path == "/garbage" else json.dumps(payload).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the slow answer, after hitforge stopped waiting for it

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def model_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ModelServer)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def private_server(settings) -> Iterator[RunningServer]:  # type: ignore[no-untyped-def]
    """The same site, run by an operator who lets heatmap models live on its own network."""
    running = serve_in_thread(create_app(settings=settings.with_overrides(heatmap_allow_private=True)))
    yield running
    running.stop()


MODELS = ("zebranet-seven", "quokkaformer", "sloth-remote", "crashy-remote", "garble-remote")


def _scan() -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (40, 40, 40)).save(buffer, format="PNG")
    return buffer.getvalue()


def launch(
    tmp_path: Path,
    market,
    requester_sessions,
    public_url: str,
    model_url: str,
    name: str,
    models=None,
    **options,
):  # type: ignore[no-untyped-def]
    """A one-HIT campaign of two images comparing MODELS (or ``models``: name -> spec); (HIT id, image)."""
    specs = models or {
        "zebranet-seven": {"provider": "builtin", "spread": 0.1},
        "quokkaformer": {"provider": "http", "url": model_url + "/good"},
        "sloth-remote": {"provider": "http", "url": model_url + "/slow"},
        "crashy-remote": {"provider": "http", "url": model_url + "/error"},
        "garble-remote": {"provider": "http", "url": model_url + "/garbage"},
    }
    media = tmp_path / "media"
    image = save_png(media, _scan())
    (media / "precomputed").mkdir()
    np.save(media / "precomputed" / "zebranet-seven-map.npy", np.eye(6))
    stored = {"zebranet-seven": "precomputed/zebranet-seven-map.npy"} if "zebranet-seven" in specs else {}
    item = {
        "image": image, "width": 64, "height": 48, "models": list(specs),
        "sentences": [
            {"text": "A faint shadow in the upper left.",
             "boxes": [{"x": 2, "y": 2, "width": 20, "height": 16}],
             "heatmaps": stored},
            {"text": "The right side is clear."},
        ],
    }  # fmt: skip
    rows = [{"id": f"img-{k}", "item": item} for k in range(2)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = {
        "name": name, "template": "heatmap", "title": f"Heatmaps {name}", "description": "Rate heatmaps.",
        "reward": "0.10", "budget": "5.00", "assignments_per_hit": 3, "items_per_hit": 2, "gold_per_hit": 0,
        "items": "items.jsonl", "media_dir": "media", "auto_approval_delay_seconds": 3600,
        "template_options": {
            "models": specs, "time_limit": TIME_LIMIT, "min_interval": 0, **options,
        },
    }  # fmt: skip
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec))
    loaded = load_campaign_file(tmp_path / "campaign.yaml")
    with session_scope(requester_sessions) as session:
        campaign_id = create_campaign(session, loaded).id
    publish_campaign(requester_sessions, market, campaign_id, public_url + "/tasks/hit")
    hit_id = market.client.list_hits()["HITs"]
    found = [h["HITId"] for h in hit_id if h["Title"] == f"Heatmaps {name}"]
    return found[0], image


def make(base: str, frame: dict[str, str], **fields: str) -> requests.Response:
    return requests.post(base + "/tasks/heatmaps/make", data={**frame, **fields}, timeout=30)


def rate_made(data: dict[str, str], position: int, rounds: tuple[dict, dict], value: int) -> None:
    """Fill ``data`` as the page's script does: each heatmap of both rounds (``/make`` answers,
    report then custom) that came rated ``value`` on every question, each one that did not marked missing."""
    for part, made in zip(("report", "custom"), rounds, strict=True):
        for h in made["heatmaps"]:
            base = f"heatmap-{position}-{part}-{h['token']}"
            if h["ok"]:
                data.update({f"{base}-{q}": str(value) for q in QUESTIONS})
            else:
                data[f"{base}-missing"] = "1"


def test_slow_and_failing_model_servers_are_cut_off_recorded_and_the_page_stays_usable(
    tmp_path, settings, live_server, private_server, model_server, market, requester_sessions
) -> None:
    hit_id, image = launch(tmp_path, market, requester_sessions, live_server.url, model_server, "hm-live")
    worker, frame = accept_framed(live_server.url, hit_id, "hm")
    page = worker.get("/tasks/hit?" + urlencode(frame))
    assert page.status_code == 200

    # Round one first: its sentence is chosen before any heatmap, own prompts come after.
    report = make(private_server.url, frame, position="0", round="report", sentence="0")
    assert report.status_code == 200
    ModelServer.received.clear()
    started = time.monotonic()
    answer = make(
        private_server.url, frame, position="0", round="custom", prompt="  a dark  band on the left "
    )
    took = time.monotonic() - started
    assert answer.status_code == 200, answer.text
    assert took < TIME_LIMIT + 8, took  # the slow model (SLOW) is not waited for
    heatmaps = answer.json()["heatmaps"]
    assert len(heatmaps) == len(MODELS)
    assert sum(h["ok"] for h in heatmaps) == 2  # the built-in and the good remote one
    failed = [h for h in heatmaps if not h["ok"]]
    assert {h["message"] for h in failed} == {NO_HEATMAP}  # one message, whatever the cause
    for h in heatmaps:
        if h["ok"]:
            assert h["src"].startswith("data:image/png;base64,")
    # The remote model got the worker's text (tidied) and the image itself.
    good = next(r for r in ModelServer.received if r["path"] == "/good")
    assert good["text"] == "a dark band on the left"
    assert base64.b64decode(good["image"]) == (tmp_path / "media" / image).read_bytes()

    with session_scope(requester_sessions) as session:
        rows = {
            r.model: r
            for r in session.scalars(
                select(HeatmapRequest).where(
                    HeatmapRequest.round == "custom", HeatmapRequest.assignment_id == frame["assignmentId"]
                )
            )
        }
    assert rows["zebranet-seven"].status == "ok" and rows["quokkaformer"].status == "ok"
    assert rows["sloth-remote"].status == "timeout" and "1.5 s" in rows["sloth-remote"].detail
    assert rows["crashy-remote"].status == "failed" and "HTTP 500" in rows["crashy-remote"].detail
    assert rows["garble-remote"].status == "failed" and "not JSON" in rows["garble-remote"].detail
    assert all(r.prompt == "a dark band on the left" and r.position == 0 for r in rows.values())

    # The page is still usable: round one's heatmaps, then a submit with the failed ones marked missing.
    assert report.json()["boxes"] == [{"x": 2, "y": 2, "width": 20, "height": 16}]
    form = BeautifulSoup(page.text, "html.parser").find("form", id="task-form")
    assert isinstance(form, Tag)
    data = {str(i["name"]): str(i.get("value", "")) for i in form.find_all("input", type="hidden")}
    prompts = ["a dark band on the left", "clear right side"]
    shown = {0: (report.json(), answer.json())}
    second = make(private_server.url, frame, position="1", round="report", sentence="1")
    shown[1] = (
        second.json(),
        make(private_server.url, frame, position="1", round="custom", prompt=prompts[1]).json(),
    )
    for position, rounds in shown.items():
        data[f"heatmap-{position}-sentence"] = str(position)
        data[f"heatmap-{position}-prompt"] = prompts[position]
        rate_made(data, position, rounds, 3)
    data["csrf_token"] = csrf_of(page)
    handoff = worker.http.post(live_server.url + "/tasks/submit", data=data)
    assert handoff.status_code == 200 and 'id="handoff"' in handoff.text, handoff.text[:2000]
    with session_scope(requester_sessions) as session:
        stored = session.scalar(select(Submission).where(Submission.assignment_id == frame["assignmentId"]))
        assert stored is not None
        first = stored.answers["answers"][0]
        assert first["custom"]["sloth-remote"] is None and first["custom"]["crashy-remote"] is None
        assert first["custom"]["zebranet-seven"] == dict.fromkeys(QUESTIONS, 3)
        assert first["prompt"] == "a dark band on the left"
        study = campaign_study(session, stored.published_hit.campaign_id)
    assert not study.left_out, study.left_out
    custom_rows = {r.model: r for r in round_tables(study.judgements)[1].rows["coverage"]}
    assert custom_rows["sloth-remote"].no_heatmap == 2 and custom_rows["sloth-remote"].rated == 0
    assert custom_rows["quokkaformer"].rated == 2 and custom_rows["quokkaformer"].mean == 3.0
    # The slow model timed out for both report sentences and image 1's prompt: three in a row, so for
    # image 2's prompt it was not called at all (hits.requester.heatmaps.lanes), and the record says why.
    assert study.requests[("report", "sloth-remote")] == {"timeout": 2}
    assert study.requests[("custom", "sloth-remote")] == {"timeout": 1, "unavailable": 1}
    with session_scope(requester_sessions) as session:
        skipped = session.scalars(
            select(HeatmapRequest.detail).where(
                HeatmapRequest.model == "sloth-remote", HeatmapRequest.status == "unavailable"
            )
        ).all()
    assert skipped and all("timed out 3 times in a row" in detail for detail in skipped)

    env = {"HITFORGE_DATABASE_URL": settings.database_url, "HITFORGE_VAR_DIR": str(settings.var_dir)}
    table = CliRunner().invoke(main, ["results", "heatmap", "hm-live"], env=env, catch_exceptions=False)
    assert table.exit_code == 0, table.output
    sloth = next(
        line.split() for line in table.output.splitlines() if line.split()[:2] == ["custom", "sloth-remote"]
    )
    assert sloth[2:7] == ["0", "0", "1", "1", "0"]  # ok, failed, timeout, unavailable, pending
    assert "Round 2: the workers' own sentences" in table.output
    wrong = CliRunner().invoke(main, ["results", "heatmap", "no-such"], env=env)
    assert wrong.exit_code != 0 and "no campaign named" in wrong.output


def test_without_the_operators_consent_a_model_on_a_private_address_is_never_called(
    tmp_path, live_server, model_server, market, requester_sessions
) -> None:
    hit_id, _ = launch(tmp_path, market, requester_sessions, live_server.url, model_server, "hm-ssrf")
    _, frame = accept_framed(live_server.url, hit_id, "hm")
    ModelServer.received.clear()
    assert make(live_server.url, frame, position="0", round="report", sentence="1").status_code == 200
    answer = make(live_server.url, frame, position="0", round="custom", prompt="anything")
    assert answer.status_code == 200
    assert sum(h["ok"] for h in answer.json()["heatmaps"]) == 1  # the built-in only
    assert ModelServer.received == []
    with session_scope(requester_sessions) as session:
        remote = session.scalars(
            select(HeatmapRequest).where(
                HeatmapRequest.model == "quokkaformer", HeatmapRequest.assignment_id == frame["assignmentId"]
            )
        ).all()
    assert remote and all("may not be called" in r.detail and r.status == "failed" for r in remote)


def test_abusive_requests_get_clear_refusals_never_a_server_error(
    tmp_path, live_server, model_server, market, requester_sessions
) -> None:
    hit_id, _ = launch(
        tmp_path, market, requester_sessions, live_server.url, model_server, "hm-abuse", live_requests=3
    )
    _, frame = accept_framed(live_server.url, hit_id, "hm")
    base = live_server.url

    forged = {**frame, "turkSubmitTo": frame["turkSubmitTo"][:-4] + "AAAA"}
    assert make(base, forged, position="0", round="report", sentence="0").status_code == 403
    preview = {"hitId": frame["hitId"], "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}
    assert make(base, preview, position="0", round="report", sentence="0").status_code == 403
    cases = [
        ({"position": "0", "round": "guess"}, 400, "report or custom"),
        ({"position": "9", "round": "report", "sentence": "0"}, 400, "which image"),
        ({"position": "-1", "round": "report", "sentence": "0"}, 400, "which image"),
        ({"position": "0", "round": "report", "sentence": "5"}, 400, "report sentences"),
        ({"position": "0", "round": "custom", "prompt": "x" * 201}, 400, "keep it to 200"),
        ({"position": "0", "round": "custom", "prompt": "   "}, 400, "Write a sentence"),
        ({"position": "0", "round": "custom", "prompt": "bell\x07"}, 400, "cannot be shown"),
    ]
    for fields, status, message in cases:
        response = make(base, frame, **fields)
        assert response.status_code == status and message in response.json()["error"], (fields, response.text)

    # The first sentence revealed is the one chosen: no peeking at another sentence's heatmaps.
    assert make(base, frame, position="0", round="report", sentence="1").status_code == 200
    locked = make(base, frame, position="0", round="report", sentence="0")
    assert locked.status_code == 409 and "sentence 2" in locked.json()["error"]
    assert locked.json()["sentence"] == 1  # the page selects it again
    # Three requests per image: this one is the third (the refused ones did not count), the next is refused.
    assert make(base, frame, position="0", round="report", sentence="1").status_code == 200
    assert make(base, frame, position="0", round="custom", prompt="one more").status_code == 200
    limited = make(base, frame, position="0", round="custom", prompt="again")
    assert limited.status_code == 429 and "3 requests" in limited.json()["error"]
    # Another image's own prompt waits for its round one (test_heatmap_submit has the details).
    assert make(base, frame, position="1", round="custom", prompt="other image").status_code == 409
    assert make(base, frame, position="1", round="report", sentence="0").status_code == 200
    assert make(base, frame, position="1", round="custom", prompt="other image").status_code == 200


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9-]+", text.lower()))


def test_no_page_script_url_or_response_a_worker_gets_names_a_model_or_the_mapping(
    tmp_path, live_server, private_server, model_server, market, requester_sessions
) -> None:
    hit_id, image = launch(tmp_path, market, requester_sessions, live_server.url, model_server, "hm-blind")
    # The scan names a model in its PNG text and EXIF; the models' arrays differ in resolution
    # (6x6 precomputed, 64x64 built in, 3x3 remote): neither may reach the worker.
    name_a_model_in(tmp_path / "media" / image, "zebranet-seven")
    overlay_sizes: set[tuple[int, int]] = set()
    secrets_ = {
        *MODELS,
        "precomputed",
        ".npy",
        model_server.split("//")[1],
        "/good",
        "/slow",
        "builtin",
    }
    seen: list[str] = []
    tokens_per_worker = []
    for n in range(2):
        worker, frame = accept_framed(live_server.url, hit_id, f"blind{n}")
        work = worker.get(f"/hits/{hit_id}")
        page = worker.get("/tasks/hit?" + urlencode(frame))
        seen += [work.text, page.text, page.url, json.dumps(dict(page.headers))]
        soup = BeautifulSoup(page.text, "html.parser")
        for img in soup.find_all("img"):
            picture = worker.get(str(img["src"]))
            assert picture.status_code == 200
            assert pixels_only(picture.content, MODELS)[0] == (64, 48)
            seen += [str(img["src"]), json.dumps(dict(picture.headers))]
        for script in soup.find_all("script"):
            seen.append(script.get_text() + str(script.get("src", "")))
            if script.get("src"):
                seen.append(worker.get(str(script["src"])).text)
        responses = [
            make(private_server.url, frame, position="0", round="report", sentence="0"),
            make(private_server.url, frame, position="0", round="custom", prompt="upper left shadow"),
            make(private_server.url, frame, position="1", round="report", sentence="1"),
        ]
        for response in responses:
            assert response.status_code == 200
            seen += [response.text, json.dumps(dict(response.headers))]
            for h in response.json()["heatmaps"]:
                if h["ok"]:
                    overlay = base64.b64decode(h["src"].split(",", 1)[1])
                    overlay_sizes.add(pixels_only(overlay, MODELS)[0])
        # What a reloaded page is given back: the same heatmaps under the same tokens, nothing more.
        again = requests.post(
            live_server.url + "/tasks/heatmaps/shown", data={**frame, "position": "0"}, timeout=30
        )
        assert again.status_code == 200 and set(again.json()) == {"report", "custom"}
        assert again.json()["report"]["heatmaps"] == responses[0].json()["heatmaps"]
        assert again.json()["custom"]["heatmaps"] == responses[1].json()["heatmaps"]
        forged = {**frame, "turkSubmitTo": frame["turkSubmitTo"][:-4] + "AAAA", "position": "0"}
        assert (
            requests.post(live_server.url + "/tasks/heatmaps/shown", data=forged, timeout=30).status_code
            == 403
        )
        seen += [again.text, json.dumps(dict(again.headers))]
        tokens_per_worker.append([(h["token"]) for h in responses[0].json()["heatmaps"]])
        labels = [h.get_text() for h in soup.select("section.round-report h3")]
        tokens_per_worker[-1] += labels
        # What the page answers a submit: the errors page, then the hand-off to the marketplace.
        form = soup.find("form", id="task-form")
        assert isinstance(form, Tag)
        data = {str(i["name"]): str(i.get("value", "")) for i in form.find_all("input", type="hidden")}
        data["csrf_token"] = csrf_of(page)
        refused = worker.http.post(live_server.url + "/tasks/submit", data=data)
        assert refused.status_code == 422
        seen.append(refused.text)
        custom = make(private_server.url, frame, position="1", round="custom", prompt="lower right").json()
        for position, made in ((0, responses[0].json()), (1, responses[2].json())):
            data[f"heatmap-{position}-sentence"] = str(position)
            data[f"heatmap-{position}-prompt"] = "upper left shadow" if position == 0 else "lower right"
            rounds = (made, responses[1].json() if position == 0 else custom)
            rate_made(data, position, rounds, 2)
        handoff = worker.http.post(live_server.url + "/tasks/submit", data=data)
        assert handoff.status_code == 200 and 'id="handoff"' in handoff.text
        seen.append(handoff.text)
    # Every overlay of every model has the scan's proportions at one size: none shows its model's grid.
    assert overlay_sizes == {(256, 192)}
    everything = "\n".join(seen)
    for secret in secrets_:
        assert secret.lower() not in everything.lower(), secret
    # Aliases and tokens are drawn per worker: the two pages share none of them.
    first, second = (set(t) for t in tokens_per_worker)
    assert not {t for t in first & second if re.fullmatch(r"[0-9a-f]{12}", t)}
    assert _words(" ".join(first)) != _words(" ".join(second))


def test_the_http_provider_gives_up_at_its_timeout_and_names_what_was_wrong(model_server) -> None:
    """Its thread is freed soon after the worker is answered, and every bad answer says why."""
    image = ImageSource(url="https://example.org/scan.png")

    def outcome(path: str, timeout: float = 5.0) -> Outcome:
        spec = ModelSpec.model_validate({"provider": "http", "url": model_server + path})
        provider = provider_for("m", spec, allow_private=True, timeout=timeout)
        assert provider is not None
        return compute_all({"m": lambda: provider.heatmap(image, "text")}, 10)["m"]

    started = time.monotonic()
    slow = outcome("/slow", timeout=0.5)
    assert time.monotonic() - started < SLOW - 1 and slow.status == "failed" and "ReadTimeout" in slow.detail
    assert "HTTP 500" in outcome("/error").detail
    assert "not JSON" in outcome("/garbage").detail
    assert "2-D array" in outcome("/flat").detail
    assert 'no "heatmap" member' in outcome("/nomember").detail
    good = outcome("/good")
    assert good.status == "ok" and good.heat is not None and good.heat.max() == 1.0
    assert ModelServer.received[-1]["image"] is None and ModelServer.received[-1]["image_url"] == image.url
