"""Every built-in template's HIT page shows a campaign's guidance, and is its own page without it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import flask
import pytest
import requests
import yaml
from bs4 import BeautifulSoup
from PIL import Image

from hits.requester.files.campaign import load_campaign_file
from hits.requester.files.examples import example_files
from hits.requester.templates import available_templates
from hits.settings import load_settings
from server.requester.hit_pages.preview import write_previews
from tests.helpers import launch_template_campaign, publish_campaign_file
from tests.server.worker_helpers import accept_framed

GUIDANCE: dict[str, Any] = {
    "instructions": "Look at **each** item closely before answering.\n\n![A worked item](guide/worked.png)",
    "examples": [
        {
            "kind": "good",
            "text": "Takes the *whole* picture into account.",
            "image": "guide/good.png",
            "image_alt": "A picture answered with care",
            "answer": "Fits well",
        },
        {"kind": "bad", "text": "Judges from the first word alone."},
    ],
    "faq": [{"question": "May I leave an item out?", "answer": "No: every item needs an answer."}],
}
#: A phrase of each template's own instructions, which the campaign's replace.
OWN_WORDS = {
    "rating": "For every picture below, read the sentence",
    "select": "Each picture below comes with a list of candidate sentences",
    "write": "Write one plain sentence for every picture below",
    "spans": "The <strong>CORRECT</strong> description was written by a person",
    "target": "Each photo below has one object marked",
    "compare": "Each picture below comes with two or more descriptions",
    "sxs": "Each picture below comes with two long descriptions",
    "refine": "Below is a picture and a description of it",
    "objects": "Each picture comes with a first list of its objects",
    "rank": "Each task below shows a reference picture",
    "heatmap": "Computer models were asked to find",
}
#: The guidance's tags in a page.html: taking them out gives the template's page as it was before guidance.
_GUIDANCE_TAGS = re.compile(
    r'\{% from "guidance\.html" import guidance_block %\}'
    r"|\n\{%- call guidance_block\(guidance\) %\}|\{% endcall -%\}\n"
    r"|\n\{#- The template's own advice[^#]*#\}|\n\{%- if not \(guidance and guidance\.instructions\) %\}"
    r"|\{% endif -%\}\n(?=<p class=\"muted\">Keyboard)"
)


def _picture(path: Path, colour: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (40, 30), colour).save(path)


def _campaign(folder: Path, template: str, guidance: dict[str, Any] | None) -> Path:
    """The template's reference example, with ``guidance`` (and its pictures) when given."""
    folder.mkdir(parents=True, exist_ok=True)
    path = example_files(template).write(folder)
    spec = yaml.safe_load(path.read_text())
    spec.pop("guidance", None)  # the rating example shows one
    if guidance is not None:
        spec["guidance"] = guidance
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    if guidance is not None:
        for name, colour in (("worked", "navy"), ("good", "green"), ("unused", "red")):
            _picture(folder / "media" / "guide" / f"{name}.png", colour)
    return path


@pytest.fixture
def pages(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, str]]:
    """Each page.html rendered by ``campaign check``'s preview: (the page, the same page from its template
    with the guidance tags taken out), rendered in one request (one CSRF token, one draw)."""
    rendered: list[tuple[str, str]] = []
    real = flask.render_template

    def both(name: str, **context: Any) -> str:
        page = real(name, **context)
        if name.endswith("/page.html"):
            source, _, _ = flask.current_app.jinja_env.loader.get_source(flask.current_app.jinja_env, name)
            bare = _GUIDANCE_TAGS.sub("", source)
            assert "guidance" not in bare, bare[:2000]
            template = flask.current_app.jinja_env.from_string(bare)
            flask.current_app.update_template_context(context)
            rendered.append((page, template.render(**context)))
        return page

    monkeypatch.setattr(flask, "render_template", both)
    monkeypatch.setenv("HITFORGE_VAR_DIR", str(tmp_path / "var"))
    return rendered


def _preview(folder: Path, template: str, guidance: dict[str, Any] | None) -> str:
    loaded = load_campaign_file(_campaign(folder, template, guidance))
    result = write_previews(loaded, folder / "preview", load_settings())
    assert not result.missing
    return result.pages[0].read_text(encoding="utf-8")


@pytest.mark.parametrize("template", sorted(available_templates()))
def test_without_guidance_the_page_is_the_templates_own(template: str, tmp_path: Path, pages) -> None:  # type: ignore[no-untyped-def]
    _preview(tmp_path / "plain", template, None)
    _preview(tmp_path / "empty", template, {})  # a section with nothing in it changes nothing either
    assert len(pages) >= 2
    for page, bare in pages:
        assert page == bare
        assert OWN_WORDS[template] in page
        assert 'class="guidance' not in page


@pytest.mark.parametrize("template", sorted(available_templates()))
def test_the_campaigns_guidance_replaces_the_templates_words(template: str, tmp_path: Path) -> None:
    page = _preview(tmp_path, template, GUIDANCE)
    assert OWN_WORDS[template] not in page
    soup = BeautifulSoup(page, "html.parser")
    block = soup.find("details", class_="guidance")
    assert block is not None and block.has_attr("open")
    assert block.find("summary").get_text() == "Instructions, examples and questions and answers"
    instructions = block.find(class_="guidance-instructions")
    assert "Look at each item closely before answering." in instructions.get_text()
    assert instructions.find("strong").get_text() == "each"
    examples = block.find_all("li", class_="guidance-example")
    kinds = [e.find(class_="guidance-example-kind").get_text(" ", strip=True) for e in examples]
    assert kinds == ["Good example : Fits well", "Bad example"]  # in words, not by colour alone
    good = examples[0].find("img")
    assert good["alt"] == "A picture answered with care"
    shown = {img["src"] for img in block.find_all("img")}
    assert len(shown) == 2
    for src in shown:  # copied next to the page under names that say nothing
        assert src.startswith("pictures/guidance-") and "good" not in src and "worked" not in src
        assert (tmp_path / "preview" / src).is_file()
    faq = block.find("details", class_="guidance-question")
    assert faq.find("summary").get_text() == "May I leave an item out?"
    assert "every item needs an answer" in faq.get_text()


def test_examples_and_faq_alone_keep_the_templates_instructions(tmp_path: Path) -> None:
    guidance = {key: value for key, value in GUIDANCE.items() if key != "instructions"}
    page = _preview(tmp_path, "select", guidance)
    block = BeautifulSoup(page, "html.parser").find("details", class_="guidance")
    assert OWN_WORDS["select"] in str(block) and block.find(class_="guidance-instructions") is None
    assert block.find("summary").get_text() == "Instructions, examples and questions and answers"


@pytest.mark.parametrize(
    ("template", "scale", "shown"),
    [
        ("rating", ["Spot on", "Nearly", "Hardly", "Not at all"], ["Spot on", "Not at all"]),
        ("sxs", ["L++", "L+", "Same", "R+", "R++"], ["> L++</label>", "> R++</label>"]),
        (
            "heatmap",
            {"coverage": ["none", "little", "half", "most", "all"]},
            ["none; little; half; most; all"],
        ),
    ],
)
def test_the_scales_words_are_the_campaigns(
    template: str, scale: Any, shown: list[str], tmp_path: Path
) -> None:
    page = _preview(tmp_path, template, {"scale": scale})
    for words in shown:
        assert words in page, words
    assert 'class="guidance' not in page  # wording alone adds no block


def test_the_page_server_shows_guidance_and_serves_only_its_pictures(
    tmp_path: Path,
    live_server,
    market,
    requester_sessions,  # type: ignore[no-untyped-def]
) -> None:
    launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rating", name="guided-setup"
    )
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    for name, colour in (("worked", "navy"), ("good", "green"), ("unused", "red")):
        _picture(tmp_path / "media" / "guide" / f"{name}.png", colour)
    spec.update(name="guided", title="Guided rating", guidance=GUIDANCE)
    campaign_id = publish_campaign_file(tmp_path, spec, market, requester_sessions, live_server.url)
    from sqlalchemy import select

    from hits.db import session_scope
    from hits.requester.tables.campaigns import PublishedHIT

    with session_scope(requester_sessions) as session:
        hit_id = session.scalars(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        ).first()
    _, params = accept_framed(live_server.url, hit_id, "guided-worker")
    page = requests.get(live_server.url + "/tasks/hit", params=params, timeout=30).text
    block = BeautifulSoup(page, "html.parser").find("details", class_="guidance")
    assert block is not None and "Look at each item closely" in block.get_text()
    sources = [img["src"] for img in block.find_all("img")]
    assert len(sources) == 2 and not any("guide/" in src for src in sources)
    served = [requests.get(live_server.url + src, timeout=30) for src in sources]
    assert all(r.status_code == 200 and r.headers["Content-Type"] == "image/png" for r in served)
    assert "sandbox" in served[0].headers["Content-Security-Policy"]
    # The picture the guidance does not show, a forged tag and another campaign's number: nothing.
    first = sources[0]
    forged = first.rsplit("/", 1)[0] + "/AAAAAAAAAAAAAAAAAAAAAAAA"
    beyond = re.sub(r"/(\d+)/(\d+)/", lambda m: f"/{m.group(1)}/2/", first)
    other = re.sub(r"/guidance/(\d+)/", lambda m: f"/guidance/{int(m.group(1)) + 1000}/", first)
    for url in (forged, beyond, other):
        assert requests.get(live_server.url + url, timeout=30).status_code == 404, url
