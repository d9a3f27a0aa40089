"""The target template: item and answer validation, gold scoring, and its page served for a real campaign."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from bs4 import BeautifulSoup, Tag
from PIL import Image
from pydantic import ValidationError
from werkzeug.datastructures import MultiDict

from hits.db import session_scope
from hits.requester.campaigns.service import create_campaign, publish_campaign
from hits.requester.files.campaign import load_campaign_file
from hits.requester.quality.aggregation import METHODS
from hits.requester.tables.campaigns import GoldItem, PublishedHIT
from hits.requester.templates import get_template
from hits.requester.templates.target import describe_box
from tests.server.worker_helpers import accept_framed


def item(**overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "image": "p1.png",
        "width": 640,
        "height": 480,
        "box": {"x": 10, "y": 300, "width": 100, "height": 120},
        "expression": "dog on the left",
        "item_id": "667576",
        "system": "sys-a",
    }
    payload.update(overrides)
    return payload


def test_item_validation_accepts_a_box_and_refuses_bad_ones() -> None:
    t = get_template("target")
    assert t.validate_item(item())["box"] == {"x": 10.0, "y": 300.0, "width": 100.0, "height": 120.0}
    bad_boxes = [
        ({"x": -1, "y": 0, "width": 10, "height": 10}, "greater than or equal to 0"),
        ({"x": 0, "y": 0, "width": 0, "height": 10}, "greater than 0"),
        ({"x": 0, "y": 0, "width": 10, "height": -5}, "greater than 0"),
        ({"x": 600, "y": 0, "width": 100, "height": 10}, "outside the 640 x 480 image"),
        ({"x": 0, "y": 0, "width": 10}, "Field required"),
    ]
    for box, message in bad_boxes:
        with pytest.raises(ValidationError, match=message):
            t.validate_item(item(box=box))
    for broken in (item(expression="  "), item(width=0), item(system=""), {**item(), "extra": 1}):
        with pytest.raises(ValidationError):
            t.validate_item(broken)


def test_parse_answers_needs_exactly_one_valid_category_per_item() -> None:
    t = get_template("target")
    ok = t.parse_answers({"category-0": "A", "category-1": "F", "category-2": "m"}, 3)
    assert ok.ok and ok.answers == ["A", "F", "M"]
    assert t.answers_from_fields(dict(t.answer_fields(ok.answers)), 3) == ok.answers
    missing = t.parse_answers({"category-0": "O"}, 2)
    assert list(missing.errors) == ["category-1"]
    assert missing.errors["category-1"].startswith("Item 2: choose one category")
    invalid = t.parse_answers({"category-0": "X"}, 1)
    assert "'X' is not one of the categories" in invalid.errors["category-0"]
    # A hand-made request can repeat the radio's name; two different answers are refused.
    duplicate = t.parse_answers(MultiDict([("category-0", "A"), ("category-0", "O")]), 1)
    assert "2 categories arrived (A, O)" in duplicate.errors["category-0"]
    same_twice = t.parse_answers(MultiDict([("category-0", "A"), ("category-0", "A")]), 1)
    assert same_twice.ok and same_twice.answers == ["A"]


def test_gold_key_scoring_and_aggregation() -> None:
    t = get_template("target")
    assert t.validate_answer_key({"category": "M"}) == {"category": "M"}
    for bad in ({"category": "X"}, {}, {"category": "M", "why": "x"}):
        with pytest.raises(ValidationError):
            t.validate_answer_key(bad)
    assert t.score_gold("M", {"category": "M"}, {}) == 1.0
    assert t.score_gold("F", {"category": "M"}, {}) == 0.0
    assert t.gold_passed(1.0, {}) and not t.gold_passed(0.0, {})
    assert t.aggregation == "dawid_skene" and t.aggregation in METHODS


def test_box_is_described_in_words() -> None:
    assert "bottom left" in describe_box(item())
    assert "16% of the photo's width and 25% of its height" in describe_box(item())
    centred = item(box={"x": 270, "y": 190, "width": 100, "height": 100})
    assert "in the centre of the photo" in describe_box(centred)


def one(node: Tag, selector: str) -> Tag:
    """The single element ``selector`` finds; fails the test when there is none."""
    found = node.select_one(selector)
    assert found is not None, f"no {selector!r} on the page"
    return found


def attr(tag: Tag, name: str) -> str:
    return str(tag[name])


def _png(path: Path, colour: str) -> None:
    Image.new("RGB", (64, 48), colour).save(path)


def _campaign(folder: Path, name: str) -> Path:
    media = folder / "media"
    media.mkdir()
    for n, colour in enumerate(["red", "green", "blue"]):
        _png(media / f"p{n}.png", colour)
    box = {"x": 4, "y": 6, "width": 20, "height": 30}
    items = [
        {
            "id": f"s/{n}",
            "item": item(
                image=f"p{n}.png",
                width=64,
                height=48,
                box=box,
                item_id=str(n),
                expression=f"<b>cup</b> & saucer {n}",
            ),
        }
        for n in range(2)
    ]
    gold = [
        {
            "id": "g/1",
            "item": item(image="p2.png", width=64, height=48, box=box, item_id="g1", expression="the zebra"),
            "answer": {"category": "F"},
        }
    ]
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (folder / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold))
    spec = {
        "name": name,
        "template": "target",
        "title": f"Name the framed object {name}",
        "description": "Say whether each description names the framed object.",
        "reward": "0.05",
        "budget": "5.00",
        "assignments_per_hit": 1,
        "items_per_hit": 2,
        "gold_per_hit": 1,
        "items": "items.jsonl",
        "gold": "gold.jsonl",
        "media_dir": "media",
    }
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec))
    return folder / "campaign.yaml"


def test_page_for_a_real_campaign(tmp_path, live_server, market, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    loaded = load_campaign_file(_campaign(tmp_path, "target-page"))
    with session_scope(requester_sessions) as session:
        campaign_id = create_campaign(session, loaded).id
    publish_campaign(requester_sessions, market, campaign_id, live_server.url + "/tasks/hit")
    with session_scope(requester_sessions) as session:
        hit = session.query(PublishedHIT).filter_by(campaign_id=campaign_id).one()
        hit_id = hit.mturk_hit_id
        payloads = [slot.payload for slot in hit.slots]
        gold_position = next(slot.position for slot in hit.slots if slot.gold_item_id)
        assert session.query(GoldItem).filter_by(campaign_id=campaign_id).one().answer == {"category": "F"}
    _, params = accept_framed(live_server.url, hit_id, "target-page")
    browser = requests.Session()
    page = browser.get(live_server.url + "/tasks/hit", params=params, timeout=30)
    assert page.status_code == 200
    soup = BeautifulSoup(page.text, "html.parser")
    items = soup.select("fieldset.target-item")
    assert len(items) == 3
    for slot, (fieldset, payload) in enumerate(zip(items, payloads, strict=True)):
        assert one(fieldset, "legend").get_text(strip=True) == f"Item {slot + 1}"
        assert one(fieldset, "p.expression").get_text() == payload["expression"]
        src = attr(one(fieldset, "img"), "src")  # opaque: the file's name could tell gold apart
        assert src.startswith("/tasks/media/") and payload["image"] not in src
        radios = fieldset.select("input[type=radio]")
        assert [attr(r, "name") for r in radios] == [f"category-{slot}"] * 4
        assert [attr(r, "value") for r in radios] == ["A", "O", "M", "F"]
        assert attr(one(fieldset, "svg rect"), "width") == "20.0"
        caption = one(fieldset, "figcaption").get_text()
        assert "bottom" not in caption and "left" in caption
    # The gold slot is marked up exactly like the others, and its key is nowhere on the page.
    attributes = {tuple(sorted(f.attrs)) for f in items}
    assert len(attributes) == 1
    assert "gold" not in page.text.lower() and not soup.select("input[checked]")
    assert "<b>cup</b>" not in page.text and "&lt;b&gt;cup&lt;/b&gt; &amp; saucer" in page.text
    image = browser.get(live_server.url + attr(one(items[0], "img"), "src"), timeout=30)
    assert image.status_code == 200 and image.headers["Content-Type"] == "image/png"

    # A partly answered page comes back with the errors listed and the worker's choice kept.
    token = attr(one(soup, "input[name=csrf_token]"), "value")
    form = {**params, "csrf_token": token, "category-0": "M"}
    again = browser.post(live_server.url + "/tasks/submit", data=form, timeout=30)
    assert again.status_code == 422
    retry = BeautifulSoup(again.text, "html.parser")
    summary = one(retry, "#error-summary")
    assert "2 problems" in summary.get_text() and "Item 2: choose one category" in summary.get_text()
    assert [attr(a, "href") for a in summary.select("a")] == ["#error-1", "#error-2"]
    assert one(retry, "input[name=category-0][value=M]").has_attr("checked")
    assert one(retry, "#error-1").get_text().startswith("Item 2")

    answers = {f"category-{i}": "A" for i in range(3)}
    answers[f"category-{gold_position}"] = "F"
    done = browser.post(live_server.url + "/tasks/submit", data={**form, **answers}, timeout=30)
    assert done.status_code == 200
    handoff = BeautifulSoup(done.text, "html.parser")
    hidden = [(attr(i, "name"), attr(i, "value")) for i in handoff.select("input[type=hidden]")]
    sent = {name: value for name, value in hidden if name.startswith("category")}
    assert sent == answers
