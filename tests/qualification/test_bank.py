"""Bank files: the default bank's contents, and located errors for broken banks."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from demo.judgment_media import judgment_items
from hits.requester.fileerrors import InputFileErrors
from qualification.bank import DEFAULT_BANK, Bank, load_bank
from tests.qualification.conftest import small_bank_data, write_bank


def test_default_bank_has_enough_items_per_section(bank: Bank) -> None:
    counts = Counter(item.section for item in bank.items.values())
    assert counts["spelling"] >= 30
    assert counts["grammar"] >= 30
    assert counts["judgment"] >= 20
    for section in ("spelling", "grammar"):
        answers = Counter(item.answer for item in bank.items_in(section))
        assert min(answers.values()) >= 12, f"{section} should mix correct and incorrect items: {answers}"


def test_default_judgment_items_have_images_and_are_regenerable(bank: Bank, tmp_path: Path) -> None:
    regenerated = judgment_items(tmp_path / "media", 22)
    for entry in regenerated:
        item = bank.items[entry["id"]]
        assert item.image == entry["image"]
        assert item.answer == entry["answer"]
        assert [c.text for c in item.choices] == [c["text"] for c in entry["choices"]]
        path = bank.image_path(item)
        assert path is not None
        assert path.read_bytes() == (tmp_path / entry["image"]).read_bytes()
        with Image.open(path) as image:
            assert image.size == (320, 240)


def test_judgment_file_names_do_not_reveal_answers(bank: Bank) -> None:
    for item in bank.items_in("judgment"):
        assert item.image is not None
        assert re.fullmatch(r"media/[0-9a-f]{20}\.png", item.image), item.image


def test_small_bank_loads(tmp_path: Path) -> None:
    loaded = load_bank(write_bank(tmp_path, small_bank_data()))
    assert [s.id for s in loaded.sections] == ["spelling", "grammar"]
    assert set(loaded.items) == {"s1", "s2", "g1", "g2"}


def _errors(tmp_path: Path, data: dict) -> list[str]:
    with pytest.raises(InputFileErrors) as info:
        load_bank(write_bank(tmp_path, data))
    return [str(e) for e in info.value.errors]


def test_missing_answer_is_rejected_naming_the_item(tmp_path: Path) -> None:
    data = small_bank_data()
    del data["items"][1]["answer"]
    [message] = _errors(tmp_path, data)
    assert "item 's2'" in message
    assert "field 'items.1.answer'" in message
    assert "bank.yaml, line" in message


def test_duplicate_id_is_rejected_naming_the_item(tmp_path: Path) -> None:
    data = small_bank_data()
    data["items"].append({"id": "g1", "section": "grammar", "sentence": "Dogs bark.", "answer": "correct"})
    messages = _errors(tmp_path, data)
    assert len(messages) == 2  # both occurrences are pointed at
    assert all("item 'g1': duplicate item id" in m for m in messages)


def test_unknown_section_is_rejected_naming_the_item(tmp_path: Path) -> None:
    data = small_bank_data()
    data["items"][0]["section"] = "speling"
    messages = _errors(tmp_path, data)
    assert any("item 's1': unknown section 'speling'" in m and "items.0.section" in m for m in messages)


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    data = small_bank_data()
    del data["items"][1]["answer"]
    data["items"][0]["section"] = "nowhere"
    data["items"].append({"id": "g2", "section": "grammar", "sentence": "Birds sing.", "answer": "maybe"})
    data["sections"][1]["pass_threshold"] = 5
    messages = "\n".join(_errors(tmp_path, data))
    assert "item 's2': Field required" in messages
    assert "item 's1': unknown section 'nowhere'" in messages
    assert "item 'g2': duplicate item id" in messages
    assert "item 'g2': answer 'maybe' is not one of the choices (correct, incorrect)" in messages
    assert "pass_threshold 5 exceeds sample 2" in messages
    assert "section 'spelling' draws 2 items but has 1" in messages


def test_judgment_item_needs_image_and_choices(tmp_path: Path) -> None:
    data = small_bank_data()
    data["sections"].append(
        {"id": "judge", "kind": "judgment", "instructions": "Pick one.", "sample": 1, "pass_threshold": 1}
    )
    data["items"].append({"id": "j1", "section": "judge", "answer": "a", "image": "missing.png", "alt": "x"})
    messages = "\n".join(_errors(tmp_path, data))
    assert "item 'j1': a judgment item needs at least two choices" in messages
    assert "item 'j1': image file not found: missing.png" in messages


def test_not_yaml_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "bank.yaml"
    path.write_text("title: [unclosed\n", encoding="utf-8")
    with pytest.raises(InputFileErrors, match="not valid YAML"):
        load_bank(path)


def test_default_bank_path_points_inside_the_package() -> None:
    assert DEFAULT_BANK.is_file()
    assert DEFAULT_BANK.parent.name == "banks"


def test_a_picture_must_be_an_image_file_inside_the_banks_folder(tmp_path: Path) -> None:
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "ok.png").write_bytes(b"\x89PNG not really")
    (tmp_path / "pics" / "notes.txt").write_text("secret")
    (tmp_path.parent / "outside.png").write_bytes(b"\x89PNG")
    (tmp_path / "pics" / "link.png").symlink_to(tmp_path.parent / "outside.png")
    data = small_bank_data()
    refs = {
        "s1": "../outside.png",
        "s2": "/etc/hosts.png",
        "g1": "pics\\ok.png",
        "g2": "pics/notes.txt",
    }
    for item in data["items"]:
        item["image"], item["alt"] = refs[item["id"]], "a picture"
    messages = "\n".join(_errors(tmp_path, data))
    assert "item 's1': image must stay inside the bank's folder (no '.' or '..'): ../outside.png" in messages
    assert "item 's2': image must be a path relative to the bank file" in messages
    assert "item 'g1': image must be a path relative to the bank file" in messages
    assert "item 'g2': image must be one of .gif, .jpeg, .jpg, .png, .webp: pics/notes.txt" in messages
    data["items"][0]["image"] = "pics/link.png"
    assert "item 's1': image must stay inside the bank's folder: pics/link.png" in "\n".join(
        _errors(tmp_path, data)
    )


def test_pictures_are_served_by_content_hash_names(bank: Bank) -> None:
    names = [bank.image_name(item) for item in bank.items_in("judgment")]
    assert all(name and re.fullmatch(r"[0-9a-f]{40}\.png", name) for name in names)
    assert set(bank.media) == set(names)
    assert bank.image_name(bank.items["sp-001"]) is None


def test_overall_pass_of_0_is_refused(tmp_path: Path) -> None:
    """A failed attempt's value is 0: a pass mark of 0 could not tell it from a pass."""
    data = small_bank_data()
    data["overall_pass"] = 0
    assert any(
        "'overall_pass': Input should be greater than or equal to 1" in m for m in _errors(tmp_path, data)
    )


def text_only_judgment_bank() -> dict:
    data = small_bank_data()
    data["sections"].append(
        {
            "id": "judge",
            "kind": "judgment",
            "instructions": "Pick the better caption.",
            "sample": 2,
            "pass_threshold": 1,
        }
    )
    for n, (good, bad) in enumerate(
        [
            ("A dog runs on a beach.", "A cat sleeps on a beach."),
            ("Two men ride bikes.", "Two men ride horses."),
        ]
    ):
        data["items"].append(
            {
                "id": f"tj{n}",
                "section": "judge",
                "prompt": "Which sentence says the same as the description?",
                "sentence": good,
                "choices": [{"id": "a", "text": good.upper()}, {"id": "b", "text": bad}],
                "answer": "a",
            }
        )
    return data


def test_judgment_items_may_be_text_only(tmp_path: Path) -> None:
    """Issue 15, item 12: Hodosh-style judgment items need no picture."""
    from qualification.assembly import assemble, worker_view
    from qualification.grading import grade
    from qualification.mturk import answer_key, question_form, validate_answer_key, validate_question_form

    loaded = load_bank(write_bank(tmp_path, text_only_judgment_bank()))
    assert loaded.media == {}
    paper = assemble(loaded, 1)
    view = worker_view(loaded, paper)
    judged = [q for s in view.sections if s.id == "judge" for q in s.questions]
    assert len(judged) == 2 and all(q.image is None and q.sentence for q in judged)
    answers = {e.item_id: loaded.items[e.item_id].answer for e in paper.items}
    assert grade(loaded, paper, answers).value == 100
    validate_question_form(question_form(loaded, paper, ""))
    validate_answer_key(answer_key(loaded, paper))


def test_a_judgment_item_with_nothing_to_judge_is_refused(tmp_path: Path) -> None:
    data = text_only_judgment_bank()
    del data["items"][-1]["prompt"], data["items"][-1]["sentence"]
    assert "item 'tj1': a judgment item needs a prompt, a sentence or an image" in "\n".join(
        _errors(tmp_path, data)
    )
