"""The heatmap template's parts on their own: items, options, blinding, answers, gold, arrays, providers."""

from __future__ import annotations

import io
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image
from pydantic import ValidationError

from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.files.campaign import load_campaign_file
from hits.requester.heatmaps import HeatmapError
from hits.requester.heatmaps.arrays import (
    checked,
    heat_of_overlay,
    load_precomputed,
    overlay_png,
    overlay_size,
)
from hits.requester.heatmaps.builtin import BlobProvider, aimed_place
from hits.requester.heatmaps.lanes import Lane
from hits.requester.heatmaps.providers import (
    ENTRY_POINT_GROUP,
    ImageSource,
    ModelSpec,
    compute_all,
    provider_for,
)
from hits.requester.templates import get_template
from hits.requester.templates.heatmap import ALIAS_WORDS, QUESTIONS
from tests.helpers import install_package

T = get_template("heatmap")
ITEM = {
    "image": "scan.png",
    "width": 100,
    "height": 80,
    "models": ["alpha-net", "beta-net"],
    "sentences": [
        {"text": "A patch in the upper left.", "boxes": [{"x": 5, "y": 5, "width": 20, "height": 20}],
         "heatmaps": {"alpha-net": "maps/alpha-net-0.npy"}},
        {"text": "Nothing else."},
    ],
}  # fmt: skip


def _ratings(v: int) -> dict[str, int]:
    return dict.fromkeys(QUESTIONS, v)


def test_items_are_checked_with_messages_that_say_what_is_wrong() -> None:
    assert T.validate_item(ITEM)["models"] == ["alpha-net", "beta-net"]
    bad = [
        ({"models": ["a", "a"]}, "each model once"),
        ({"models": ["bad name"]}, "letters, digits"),
        ({"sentences": [{"text": "x", "heatmaps": {"alpha-net": "../secret.npy"}}]}, "inside the campaign"),
        ({"sentences": [{"text": "x", "heatmaps": {"alpha-net": "/etc/passwd"}}]}, "inside the campaign"),
        ({"sentences": [{"text": "x", "heatmaps": {"alpha-net": "maps/x.txt"}}]}, ".npy array or a picture"),
        ({"sentences": [{"text": "x", "heatmaps": {"gamma": "maps/x.npy"}}]}, "models not in models: gamma"),
        ({"width": None}, "boxes need the image's width and height"),
        ({"width": 20}, "reaches outside the 20x80 image"),
        ({"sentences": []}, "at least 1"),
    ]
    for change, message in bad:
        with pytest.raises(ValidationError, match=message):
            T.validate_item({**ITEM, **change})


def _campaign(tmp_path: Path, options: dict, items: list[dict] | None = None, files: bool = True) -> Path:
    media = tmp_path / "media"
    (media / "maps").mkdir(parents=True, exist_ok=True)
    if files:
        np.save(media / "maps" / "alpha-net-0.npy", np.ones((4, 4)))
    rows = [{"id": f"i{k}", "item": item} for k, item in enumerate(items or [ITEM])]
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    spec = {
        "name": "hm", "template": "heatmap", "title": "t", "description": "d", "reward": "0.10",
        "budget": "5.00", "items": "items.jsonl", "media_dir": "media", "gold_per_hit": 0,
        "template_options": options,
    }  # fmt: skip
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec))
    return tmp_path / "campaign.yaml"


def test_a_careless_campaign_file_is_refused_at_launch_naming_template_options(tmp_path) -> None:
    builtin = {"provider": "builtin"}
    ok = _campaign(tmp_path, {"models": {"alpha-net": builtin, "beta-net": builtin}})
    assert len(load_campaign_file(ok).items) == 1
    cases = [
        ({"models": {"alpha-net": builtin}}, True, "sentence 1: model 'beta-net' has no precomputed heatmap"),
        ({"models": {"alpha-net": builtin, "beta-net": builtin}}, False, "'maps/alpha-net-0.npy' is not in"),
        ({"models": {"beta-net": {"provider": "http"}}}, True, "an http provider needs a url"),
        ({"models": {"beta-net": {"provider": "http", "url": "ftp://x.example/"}}}, True, "needs a url"),
        (
            {"models": {"beta-net": {"provider": "entry_point", "entry_point": "nope"}}},
            True,
            "registers 'nope'",
        ),
        ({"models": {"beta-net": {"provider": "magic"}}}, True, "provider"),
        ({"models": {"alpha-net": builtin, "beta-net": builtin}, "time_limit": 0}, True, "time_limit"),
        ({"models": {"alpha-net": builtin, "beta-net": builtin}, "colour": "red"}, True, "colour"),
    ]
    for options, files, message in cases:
        path = _campaign(tmp_path, options, files=files)
        if not files:
            (tmp_path / "media" / "maps" / "alpha-net-0.npy").unlink()
        with pytest.raises((InputFileError, InputFileErrors)) as caught:
            load_campaign_file(path)
        # Keys the options model refuses are named with their own field and line (template_options.x).
        errors = caught.value.errors if isinstance(caught.value, InputFileErrors) else [caught.value]
        assert any((e.field or "").startswith("template_options") and message in str(e) for e in errors), str(
            caught.value
        )


def test_aliases_and_tokens_are_drawn_per_assignment_and_the_view_names_no_model() -> None:
    rng = random.SystemRandom()
    drawn = [T.arrange(ITEM, rng) for _ in range(60)]
    for arrangement in drawn:
        aliases = arrangement["aliases"]
        assert sorted(a["model"] for a in aliases) == ITEM["models"]
        assert len({a["token"] for a in aliases}) == 2 and all(len(a["token"]) == 12 for a in aliases)
        assert all(a["label"].removeprefix("Model ") in ALIAS_WORDS for a in aliases)
        view = json.dumps(T.arranged_view(ITEM, arrangement))
        assert "alpha" not in view and "beta" not in view and "maps/" not in view and ".npy" not in view
    assert len({d["aliases"][0]["model"] for d in drawn}) == 2  # either model may come first
    assert len({d["aliases"][0]["label"] for d in drawn}) > 5


def _page_form(tokens: list[str], **extra: str) -> dict[str, str]:
    form = {"heatmap-0-models": ",".join(tokens), "heatmap-0-sentence": "1", "heatmap-0-prompt": "  a  spot "}
    for k, token in enumerate(tokens):
        for q in QUESTIONS:
            form[f"heatmap-0-report-{token}-{q}"] = str(k + 1)
            form[f"heatmap-0-custom-{token}-{q}"] = str(k + 2)
    form.update(extra)
    return form


def test_answers_are_parsed_unscrambled_and_round_trip_through_mturk_fields() -> None:
    arrangement = T.arrange(ITEM, random.SystemRandom())
    tokens = [a["token"] for a in arrangement["aliases"]]
    parsed = T.parse_answers(_page_form(tokens), 1)
    assert parsed.ok, parsed.errors
    answer = parsed.answers[0]
    assert answer["sentence"] == 1 and answer["prompt"] == "a spot"
    assert T.answers_from_fields(dict(T.answer_fields(parsed.answers)), 1) == parsed.answers
    stored = T.unscramble(answer, arrangement, ITEM)
    first = arrangement["aliases"][0]["model"]
    assert stored["report"][first] == _ratings(1) and stored["custom"][first] == _ratings(2)
    assert set(stored["report"]) == set(ITEM["models"])
    # A token this assignment was not given is dropped, not stored under some model.
    forged = {**answer, "report": {**answer["report"], "0123456789ab": _ratings(5)}}
    assert set(T.unscramble(forged, arrangement, ITEM)["report"]) == set(ITEM["models"])


def test_incomplete_or_wrong_answers_get_one_clear_error_per_image() -> None:
    tokens = ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]
    form = _page_form(tokens)
    del form["heatmap-0-report-aaaaaaaaaaaa-share"]
    form["heatmap-0-custom-bbbbbbbbbbbb-coverage"] = "9"
    form["heatmap-0-prompt"] = "   "
    error = T.parse_answers(form, 1).errors["heatmap-0"]
    assert "rate every heatmap for the sentence (1 still open)" in error
    assert "write your own sentence" in error and "not one of the five choices" in error
    assert (
        "choose a report sentence"
        in T.parse_answers({**form, "heatmap-0-sentence": "\u0661"}, 1).errors["heatmap-0"]
    )  # an Arabic-Indic digit is not a sentence number
    assert (
        "reload the page"
        in T.parse_answers({**_page_form(tokens), "heatmap-0-models": ""}, 1).errors["heatmap-0"]
    )
    # A heatmap that did not come is marked missing instead of rated.
    missing = _page_form(tokens, **{"heatmap-0-custom-aaaaaaaaaaaa-missing": "1"})
    for q in QUESTIONS:
        del missing[f"heatmap-0-custom-aaaaaaaaaaaa-{q}"]
    assert T.parse_answers(missing, 1).answers[0]["custom"]["aaaaaaaaaaaa"] is None
    # The chosen sentence must be one the item has.
    out_of_range = T.check_against_items(
        T.parse_answers({**_page_form(tokens), "heatmap-0-sentence": "7"}, 1), [ITEM]
    )
    assert "choose one of the report sentences" in out_of_range.errors["heatmap-0"]


def test_gold_keys_cover_every_sentence_and_score_within_the_tolerance() -> None:
    key = T.validate_answer_key(
        {"sentences": {"0": {"alpha-net": {"coverage": 5}}, "1": {"beta-net": _ratings(1)}}}
    )
    T.check_answer_key(key, ITEM)
    with pytest.raises(ValueError, match="missing 1"):
        T.check_answer_key(T.validate_answer_key({"sentences": {"0": {"alpha-net": {"coverage": 5}}}}), ITEM)
    with pytest.raises(ValueError, match="gamma"):
        T.check_answer_key(
            T.validate_answer_key({"sentences": {"0": {"gamma": {"coverage": 5}}, "1": {}}}), ITEM
        )
    with pytest.raises(ValidationError, match="from 1 to 5"):
        T.validate_answer_key({"sentences": {"0": {"alpha-net": {"coverage": 6}}}})
    stored = json.loads(json.dumps(key))  # as the database gives it back: string keys
    answer = {"sentence": 1, "report": {"beta-net": {"coverage": 2, "share": 1, "intuitive": 3}}}
    assert T.score_gold(answer, stored, {}) == pytest.approx(2 / 3)
    assert T.score_gold(answer, stored, {"gold_tolerance": 2}) == 1.0
    assert T.score_gold({**answer, "report": {"beta-net": None}}, stored, {}) == 0.0
    assert T.score_gold({**answer, "sentence": 0}, stored, {}) == 0.0


def test_arrays_are_checked_and_drawn_as_overlays_whose_opacity_follows_the_heat(tmp_path) -> None:
    for bad, message in [
        ([[1, float("nan")]], "NaN"),
        ([[1, -1]], "negative"),
        (np.ones((2, 2, 2)), "2-D"),
        (np.ones((3000, 2)), "at most"),
        ("hot", "not an array"),
    ]:
        with pytest.raises(HeatmapError, match=message):
            checked(bad)
    assert checked(np.zeros((3, 3))).max() == 0
    assert checked([[[0, 2], [1, 4]]]).tolist() == [[0, 0.5], [0.25, 1]]  # a batch of one
    heat = np.zeros((8, 8))
    heat[:4, :4] = 1.0
    png = overlay_png(checked(heat))
    seen = heat_of_overlay(png)
    assert seen.shape == (256, 256) and seen[:100, :100].min() > 0.75 and seen[160:, 160:].max() == 0
    np.save(tmp_path / "h.npy", heat)
    assert load_precomputed(tmp_path / "h.npy").max() == 1.0
    Image.fromarray(np.uint8(heat * 200)).save(tmp_path / "h.png")
    assert load_precomputed(tmp_path / "h.png")[0, 0] == 1.0
    np.save(tmp_path / "o.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(HeatmapError, match="cannot be read"):
        load_precomputed(tmp_path / "o.npy")  # never unpickled
    with pytest.raises(HeatmapError, match="cannot be read"):
        load_precomputed(tmp_path / "missing.npy")


def test_the_builtin_provider_is_deterministic_and_aims_by_position_words() -> None:
    assert aimed_place("opacity in the LOWER right zone") == (0.75, 0.75)
    assert aimed_place("a shadow") is None
    aimed = BlobProvider(name="m", spread=0.05)
    heat = checked(aimed.heatmap(ImageSource(), "spot upper left"))
    y, x = np.unravel_index(heat.argmax(), heat.shape)
    assert x < 20 and y < 20
    assert np.array_equal(aimed.heatmap(ImageSource(), "a shadow"), aimed.heatmap(ImageSource(), "a shadow"))
    lost = BlobProvider(name="m", spread=0.05, aim="hash")
    assert not np.array_equal(lost.heatmap(ImageSource(), "spot upper left"), heat)


def test_compute_all_returns_within_the_limit_whatever_the_providers_do() -> None:
    def slow() -> object:
        time.sleep(6)
        return [[1.0]]

    def broken() -> object:
        raise RuntimeError("model crashed")

    started = time.monotonic()
    out = compute_all(
        {"slow": slow, "broken": broken, "bad": lambda: {"heat": 1}, "good": lambda: [[0, 1]], "none": None},
        0.5,
    )
    assert time.monotonic() - started < 3.5  # well before the slow job ends, with room for a loaded machine
    assert out["slow"].status == "timeout" and "0.5 s" in out["slow"].detail
    assert out["broken"].status == "failed" and "model crashed" in out["broken"].detail
    assert out["bad"].status == "failed"
    assert out["good"].status == "ok" and out["good"].heat is not None
    assert out["none"].status == "unavailable"


def test_an_installed_entry_point_provides_heatmaps(tmp_path, monkeypatch) -> None:
    """A package registers a provider under hitforge.heatmap_providers; the campaign names it."""
    source = (
        "import numpy as np\n"
        "class Corner:\n"
        "    def __init__(self, size=4):\n"
        "        self.size = size\n"
        "    def heatmap(self, image, text):\n"
        "        heat = np.zeros((self.size, self.size))\n"
        "        heat[0, 0] = len(text)\n"
        "        return heat\n"
    )
    install_package(
        tmp_path,
        monkeypatch,
        "corner_model",
        source,
        f"[{ENTRY_POINT_GROUP}]\ncorner = corner_model:Corner\n",
    )
    spec = ModelSpec.model_validate(
        {"provider": "entry_point", "entry_point": "corner", "options": {"size": 6}}
    )
    provider = provider_for("m", spec)
    assert provider is not None
    out = compute_all({"m": lambda: provider.heatmap(ImageSource(), "left")}, 2)
    assert out["m"].status == "ok" and out["m"].heat is not None and out["m"].heat.shape == (6, 6)
    # Made once per process and options (loading a model is slow), a new one for other options.
    assert provider_for("m", spec) is provider
    other = spec.model_copy(update={"options": {"size": 3}})
    assert provider_for("m", other) is not provider
    # A package uninstalled after the campaign was launched: that model's heatmaps fail, clearly.
    gone = ModelSpec.model_construct(provider="entry_point", entry_point="uninstalled", options={})
    out = compute_all({"m": lambda: provider_for("m", gone)}, 2)
    assert out["m"].status == "failed" and "no installed package registers 'uninstalled'" in out["m"].detail
    sys.modules.pop("corner_model", None)


def test_overlay_png_is_a_real_png() -> None:
    png = overlay_png(checked(np.eye(4)))
    with Image.open(io.BytesIO(png)) as picture:
        assert picture.format == "PNG" and picture.mode == "RGBA"


def test_overlays_of_every_resolution_come_out_one_size_with_pixels_only() -> None:
    """A model's native resolution (3x3, 7x5, 64x64, 1000x800) never shows in its overlay."""
    size = overlay_size(640, 480)
    assert size == (256, 192) and overlay_size(None, None) == (256, 256)
    for shape in ((3, 3), (5, 7), (64, 64), (800, 1000)):
        with Image.open(io.BytesIO(overlay_png(checked(np.random.default_rng(1).random(shape)), size))) as p:
            assert p.size == size and set(p.info) <= {"dpi"} and not p.text  # type: ignore[attr-defined]


def test_a_lane_bounds_calls_in_flight_and_its_breaker_opens_then_tries_again() -> None:
    """The lane of one provider: places for calls, timeouts in a row, the pause, one more try."""
    lane = Lane("a model", max_in_flight=2, breaker_timeouts=2, cooldown=0.3)
    assert lane.admit() is None and lane.admit() is None
    assert "2 earlier calls to it are still running" in (lane.admit() or "")
    lane.release()
    lane.timed_out()
    lane.answered(ok=True)  # a heatmap in time: the timeouts are no longer in a row
    lane.timed_out()
    assert lane.admit() is None  # one timeout in a row: still called
    lane.release()
    lane.release()
    lane.timed_out()
    refused = lane.admit()
    assert refused is not None and "timed out 2 times in a row" in refused
    time.sleep(0.35)
    assert lane.admit() is None  # tried again after the pause
    lane.release()
    lane.timed_out()  # and one more timeout leaves it alone again at once
    assert "timed out 3 times in a row" in (lane.admit() or "")
