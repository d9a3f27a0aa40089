"""Seeders (file, builtin, http, entry points; time limit and retries) and the per-round figures."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from hits.requester.seeders import (
    BuiltinSeeder,
    FileSeeder,
    HttpSeeder,
    ObjectSeed,
    Picture,
    SeederError,
    SeederOptions,
    Seeds,
    call_seeder,
    make_seeder,
    seed_text,
)
from hits.requester.text_metrics import (
    edit_distance,
    jaccard,
    pos_counts,
    round_metrics,
    tagger_available,
    tokens,
)

PICTURE = Picture(item_id="p1", image="cat.png", alt="A cat on a mat.")


def test_the_figures_of_a_round() -> None:
    assert tokens("A dog's ball, RED.") == ["a", "dog's", "ball", "red"]
    assert jaccard("a red ball", "a red ball", 2) == 1.0
    # Bigrams {a red, red ball} vs {a red, red cube}: one shared of three.
    assert jaccard("a red ball", "A red cube.", 2) == pytest.approx(1 / 3)
    assert jaccard("a red ball", "a blue ball", 1) == pytest.approx(2 / 4)
    assert jaccard("", "", 2) == 1.0 and jaccard("one", "", 2) == 0.0
    assert edit_distance("kitten", "sitting") == 3
    figures = round_metrics("a red ball", "a red ball on grass", 2)
    assert figures["tokens"] == 5 and figures["previous_tokens"] == 3
    assert figures["jaccard"] == pytest.approx(2 / 4) and figures["edit_distance"] == 9
    # Parts of speech only where a tagger is installed: never guessed.
    assert (pos_counts("A red ball rolls quickly.") is None) == (not tagger_available())


def test_builtin_and_file_seeders(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert BuiltinSeeder().seed(PICTURE) == Seeds("A cat on a mat.")
    assert BuiltinSeeder().seed(Picture("p2", "x.png")).caption == "A picture."
    path = tmp_path / "seeds.jsonl"
    line = {
        "id": "p1",
        "caption": "A cat",
        "objects": [{"label": "cat", "box": [1, 2, 30, 40], "caption": "a grey cat"}],
    }
    path.write_text(json.dumps(line) + "\n")
    seeds = FileSeeder(path).seed(PICTURE)
    assert seeds == Seeds("A cat", [ObjectSeed("cat", (1.0, 2.0, 30.0, 40.0), "a grey cat")])
    assert seed_text(seeds) == "A cat. A grey cat."
    # Task 1's triples replace the seeder's objects when a person has annotated them.
    assert seed_text(seeds, [{"label": "cat", "box": [0, 0, 1, 1], "description": "A tabby cat asleep"}]) == (
        "A cat. A tabby cat asleep."
    )
    with pytest.raises(SeederError, match="no seeds for item 'p2'"):
        FileSeeder(path).seed(Picture("p2", "x.png"))
    path.write_text('{"id": "p1", "caption": 3, "extra": 1}\n')
    with pytest.raises(SeederError, match="line 1"):
        FileSeeder(path).seed(PICTURE)
    with pytest.raises(SeederError, match="the file seeder needs path"):
        make_seeder(SeederOptions(kind="file"), tmp_path)
    with pytest.raises(SeederError, match="unknown seeder 'yolo'; choose one of: builtin, file, http"):
        make_seeder(SeederOptions(kind="yolo"), tmp_path)


class _Slow:
    def __init__(self, delays: list[float]):
        self.delays, self.calls = delays, 0

    def seed(self, picture: Picture) -> Seeds:
        delay = self.delays[min(self.calls, len(self.delays) - 1)]
        self.calls += 1
        time.sleep(delay)
        return Seeds(f"after {delay}")


class _Flaky:
    def __init__(self) -> None:
        self.calls = 0

    def seed(self, picture: Picture) -> Seeds:
        self.calls += 1
        if self.calls < 3:
            raise ConnectionError("model server restarting")
        return Seeds("third time lucky")


def test_a_seeder_is_called_with_a_time_limit_and_retried() -> None:
    waits: list[float] = []
    flaky = _Flaky()
    assert (
        call_seeder(flaky, PICTURE, timeout=1, attempts=3, sleep=waits.append).caption == "third time lucky"
    )
    assert flaky.calls == 3 and waits == [0.5, 1.0]
    # A call that overruns is abandoned and tried again; the next, quick one is used.
    slow = _Slow([5.0, 0.0])
    started = time.monotonic()
    # A second long enough for the quick call's thread to get a core on a loaded machine.
    assert call_seeder(slow, PICTURE, timeout=1, attempts=2, sleep=lambda _s: None).caption == "after 0.0"
    assert time.monotonic() - started < 4  # the abandoned 5 s call was not waited for
    with pytest.raises(SeederError, match="failed after 2 tries: the seeder took longer than 0.2 s"):
        call_seeder(_Slow([3.0]), PICTURE, timeout=0.2, attempts=2, sleep=lambda _s: None)
    with pytest.raises(SeederError, match="model server restarting"):
        call_seeder(_Flaky(), PICTURE, timeout=1, attempts=2, sleep=lambda _s: None)


def test_an_http_seeder_may_not_reach_private_addresses_unless_allowed() -> None:
    """The destination rules of notification web hooks; a local model works once allowed."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    for url in (
        "http://127.0.0.1:9/seed",
        "http://169.254.169.254/latest",
        "http://10.0.0.1/",
        "file:///etc/passwd",
    ):
        with pytest.raises(SeederError, match="cannot be used"):
            HttpSeeder(url)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the standard library's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            answer = json.dumps({"caption": f"seen {body['id']} {body['image']}", "objects": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/seed"
        seeder = make_seeder(SeederOptions(kind="http", url=url, allow_private=True), Path("."))
        assert call_seeder(seeder, PICTURE, timeout=5, attempts=1).caption == "seen p1 cat.png"
    finally:
        server.shutdown()


def test_a_seeder_from_an_installed_package_and_never_in_a_web_request(
    tmp_path, monkeypatch, settings
) -> None:  # type: ignore[no-untyped-def]
    """The ``hitforge.seeders`` entry-point group, through a real (tiny) installed distribution."""
    (tmp_path / "tinyseeder.py").write_text(
        "from hits.requester.seeders import Seeds\n"
        "class TinySeeder:\n"
        "    def __init__(self, options):\n"
        "        self.caption = options['caption']\n"
        "    def seed(self, picture):\n"
        "        return Seeds(self.caption + ' ' + picture.item_id)\n"
    )
    info = tmp_path / "tinyseeder-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinyseeder\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hitforge.seeders]\ntiny = tinyseeder:TinySeeder\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seeder = make_seeder(SeederOptions(kind="tiny", options={"caption": "Seeded for"}), tmp_path)
    assert call_seeder(seeder, PICTURE, timeout=5, attempts=1).caption == "Seeded for p1"

    from server import create_app

    app = create_app(settings=settings)
    with (
        app.test_request_context("/dashboard/"),
        pytest.raises(SeederError, match="never inside a web request"),
    ):
        call_seeder(seeder, PICTURE, timeout=5, attempts=1)


def test_an_unknown_tagger_is_refused_with_the_names_there_are() -> None:
    from pydantic import ValidationError

    from hits.requester.files.workflow import RoundsPolicy

    with pytest.raises(
        ValidationError, match="unknown part-of-speech tagger 'nope'; choose one of: .*nltk.*none"
    ):
        RoundsPolicy.model_validate({"pos_tagger": "nope"})
    assert round_metrics("a", "a red ball", 2, "none")["pos"] is None


def test_an_http_seeder_is_sent_the_pictures_address_when_it_is_on_the_web() -> None:
    from hits.requester.seeders import request_body

    body = request_body(Picture("p9", "https://example.org/9.jpg", alt="A dog."))
    assert body == {
        "id": "p9",
        "image": "https://example.org/9.jpg",
        "alt": "A dog.",
        "image_url": body["image"],
    }
    with pytest.raises(SeederError, match="cannot read the picture 'gone.png'"):
        request_body(Picture("p8", "gone.png", path=Path("/nonexistent/gone.png")))
