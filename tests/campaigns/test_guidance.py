"""The campaign file's ``guidance:`` section: what is refused, and Markdown made harmless (issue 25)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup

from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.files.campaign import load_campaign_file
from hits.requester.files.examples import example_files
from hits.requester.files.guidance import render_markdown


def _write(folder: Path, template: str, guidance: Any) -> Path:
    path = example_files(template).write(folder)
    spec = yaml.safe_load(path.read_text())
    spec["guidance"] = guidance
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _errors(path: Path) -> list[InputFileError]:
    with pytest.raises((InputFileError, InputFileErrors)) as caught:
        load_campaign_file(path)
    error = caught.value
    return error.errors if isinstance(error, InputFileErrors) else [error]


def test_an_unknown_key_is_refused_with_the_closest_one(tmp_path: Path) -> None:
    [error] = _errors(_write(tmp_path, "rating", {"instruction": "Rate each pair."}))
    assert error.field == "guidance.instruction"
    assert "instructions" in error.message  # the closest valid key is suggested
    [error] = _errors(_write(tmp_path, "rating", {"examples": [{"kind": "fine", "text": "x"}]}))
    assert error.field == "guidance.examples.0.kind" or error.field == "guidance.examples[0].kind", (
        error.field
    )


@pytest.mark.parametrize(
    ("template", "scale", "words"),
    [
        ("rating", ["Good", "Bad"], "has 4 points, so it takes 4 labels, not 2"),
        ("sxs", ["a", "b", "c", "d", "e", "f"], "has 5 points, so it takes 5 labels, not 6"),
        ("heatmap", {"coverage": ["a", "b"]}, "'coverage' has 5 points, so it takes 5 labels, not 2"),
        ("heatmap", {"colour": ["a", "b", "c", "d", "e"]}, "has no part 'colour'"),
        ("heatmap", ["a", "b", "c", "d", "e"], "takes a mapping of coverage, share, intuitive"),
        ("select", ["yes", "no"], "has no answer scale to reword"),
    ],
)
def test_a_scale_of_the_wrong_length_or_shape_is_refused(
    tmp_path: Path, template: str, scale: Any, words: str
) -> None:
    [error] = _errors(_write(tmp_path, template, {"scale": scale}))
    assert error.line is not None and words in error.message, error


def test_a_scale_of_the_right_length_loads(tmp_path: Path) -> None:
    loaded = load_campaign_file(_write(tmp_path, "rating", {"scale": ["A", "B", "C", "D"]}))
    assert loaded.spec.guidance is not None and loaded.spec.guidance.scale == ["A", "B", "C", "D"]


def test_a_missing_example_picture_names_file_line_and_field(tmp_path: Path) -> None:
    guidance = {
        "instructions": "See ![the layout](guide/layout.png) first.",
        "examples": [
            {"kind": "good", "text": "Careful.", "image": "guide/absent.png", "image_alt": "A careful one"}
        ],
    }
    errors = _errors(_write(tmp_path, "select", guidance))
    by_field = {e.field: e for e in errors}
    assert set(by_field) == {"guidance.examples.0.image", "guidance.instructions"}
    assert "no file 'guide/absent.png'" in by_field["guidance.examples.0.image"].message
    assert "no file 'guide/layout.png'" in by_field["guidance.instructions"].message
    text = (tmp_path / "campaign.yaml").read_text().splitlines()
    assert "guide/absent.png" in text[by_field["guidance.examples.0.image"].line - 1]  # type: ignore[operator]
    assert all(e.path.endswith("campaign.yaml") for e in errors)


def test_pictures_from_outside_the_media_folder_are_refused(tmp_path: Path) -> None:
    guidance = {
        "instructions": "![tracker](https://example.org/pixel.png) ![up](../campaign.yaml)",
        "examples": [
            {"kind": "bad", "text": "x", "image": "https://example.org/bad.png", "image_alt": "Bad"}
        ],
    }
    messages = [e.message for e in _errors(_write(tmp_path, "select", guidance))]
    assert any("must be a file of the campaign's media folder" in m for m in messages)
    assert any("no file '../campaign.yaml'" in m for m in messages)  # outside the folder: not found there
    assert len(messages) == 3


def test_javascript_and_data_links_are_refused_at_check(tmp_path: Path) -> None:
    guidance = {
        "faq": [{"question": "Why?", "answer": "[see](javascript:alert(1)) or [this]( DATA:text/html,x)"}]
    }
    errors = _errors(_write(tmp_path, "write", guidance))
    assert [e.field for e in errors] == ["guidance.faq.0.answer"] * 2
    assert all("links must be http, https or mailto" in e.message for e in errors)


def test_links_and_scripts_render_inert() -> None:
    html = render_markdown(
        "<script>alert(1)</script>\n\n[click](javascript:alert(1)) [pic](data:text/html;base64,PHNjcmlwdD4=) "
        '<img src=x onerror="alert(1)"> [ok](https://example.org/help) ![x](https://example.org/p.png)',
        lambda picture: None,
    )
    soup = BeautifulSoup(html, "html.parser")
    assert soup.find("script") is None and soup.find("img") is None  # raw HTML is text, not elements
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    links = soup.find_all("a")
    assert [a.get("href") for a in links] == [None, None, "https://example.org/help"]
    assert links[2]["target"] == "_blank" and links[2]["rel"] == ["noopener", "noreferrer"]
    assert "javascript" not in " ".join(str(a.attrs) for a in links)
    assert "x" in soup.get_text()  # a picture from elsewhere is left as its words


def test_media_pictures_render_at_their_served_url() -> None:
    html = render_markdown("![A good one](guide/good%20one.png)", {"guide/good one.png": "/served/1"}.get)
    assert '<img src="/served/1" alt="A good one"' in html


def test_an_example_picture_needs_its_words_and_a_label_its_text(tmp_path: Path) -> None:
    [error] = _errors(
        _write(tmp_path, "select", {"examples": [{"kind": "good", "text": "x", "image": "a.png"}]})
    )
    assert "needs image_alt" in error.message and error.line is not None
    errors = _errors(_write(tmp_path, "rating", {"scale": ["A", "", "C", "D"]}))
    assert any(e.field is not None and e.field.startswith("guidance.scale") for e in errors)


def test_headings_sit_under_the_pages_title() -> None:
    html = render_markdown("# Steps\n\n## Detail\n\n###### Least", lambda picture: None)
    assert "<h2>Steps</h2>" in html and "<h3>Detail</h3>" in html and "<h6>Least</h6>" in html
    assert "<h1" not in html


def test_campaign_check_names_file_line_and_field(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from server.cli.main import main

    path = _write(
        tmp_path, "write", {"examples": [{"kind": "bad", "text": "x", "image": "gone.png", "image_alt": "x"}]}
    )
    env = {"HITFORGE_VAR_DIR": str(tmp_path / "var"), "COLUMNS": "200"}
    result = CliRunner().invoke(main, ["campaign", "check", str(path)], env=env, catch_exceptions=False)
    assert result.exit_code != 0
    said = " ".join(result.output.split())
    assert "campaign.yaml" in said and "guidance.examples.0.image" in said and "no file 'gone.png'" in said, (
        said
    )
