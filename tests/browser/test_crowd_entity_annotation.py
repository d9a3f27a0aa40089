"""crowd-entity-annotation worked by keyboard alone and by mouse in Chromium, offline.

AWS meant the element to be used on its own (it brings its own form and Submit
button); MTurk pages also put it in a <crowd-form>. Both are tested, and the
stored answers (boto3 GetAssignment) are ``{"entities": [{endOffset, label,
startOffset}]}`` with offsets in Unicode code points, so that Python's
``text[start:end]`` is the labelled span even after an emoji.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

NEWS = "😀 Jeff Bezos founded Amazon in July 1994 in Seattle."
# AWS's own layout: no crowd-form, labels as objects, extra questions moved into the element's form.
BARE_BODY = f"""
<crowd-entity-annotation name="crowd-entity-annotation" header="Highlight the names and dates"
    labels="[{{'label': 'person', 'shortDisplayName': 'per', 'fullDisplayName': 'Person'}},
             {{'label': 'date', 'shortDisplayName': 'dat', 'fullDisplayName': 'Date'}},
             {{'label': 'company', 'shortDisplayName': 'com', 'fullDisplayName': 'Company'}}]"
    text="{NEWS}">
  <full-instructions header="Entities"><p>Label whole names only.</p></full-instructions>
  <short-instructions>Apply labels to words or phrases.</short-instructions>
  <div id="additionalQuestions">
    <h3>What is the text about?</h3>
    <crowd-radio-group>
      <crowd-radio-button name="tech" value="tech">Technology</crowd-radio-button>
      <crowd-radio-button name="politics" value="politics">Politics</crowd-radio-button>
    </crowd-radio-group>
  </div>
</crowd-entity-annotation>
<script>
  document.addEventListener('all-crowd-elements-ready', () => {{
    document.querySelector('crowd-entity-annotation').shadowRoot.querySelector('crowd-form').form
      .appendChild(additionalQuestions);
  }});
</script>
"""

PRIZE = "Marie Curie won the Nobel Prize in Paris in 1903 and again in 1911."
FORM_BODY = f"""
<crowd-form answer-format="flatten-objects">
  <crowd-entity-annotation name="tagged" header="Label people, places and years"
      labels="['person', 'place', 'year']" text="{PRIZE}"
      initial-value="[{{label: 'person', startOffset: 0, endOffset: 11}},
                      {{label: 'person', startOffset: 35, endOffset: 40}},
                      {{label: 'year', startOffset: 20, endOffset: 31}}]">
  </crowd-entity-annotation>
</crowd-form>
"""


def test_entities_by_keyboard_alone_without_a_crowd_form(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, BARE_BODY, height=800)
    frame = hit.frame
    text = frame.get_by_role("application", name="Text to annotate")
    status = frame.get_by_role("status")
    text.focus()
    # Word by word to "Jeff", then Shift selects two words; Enter labels them with the first label.
    for key in ["Control+ArrowRight", "Control+ArrowLeft"] + ["Shift+Control+ArrowRight"] * 2:
        text.press(key)
    expect(status).to_have_text("Selected “Jeff Bezos”.")
    text.press("Enter")
    expect(status).to_have_text("Labelled “Jeff Bezos” as Person.")
    # "3" (Company) after Escape chooses the label only; Space labels too.
    for key in ["Escape", "Control+ArrowRight", "Control+ArrowRight", "Control+ArrowLeft", "3"]:
        text.press(key)
    for key in ["Shift+Control+ArrowRight", "Space"]:
        text.press(key)
    for key in ["Escape", "2", "Control+ArrowRight", "Control+ArrowRight", "Control+ArrowLeft"]:
        text.press(key)
    for key in ["Shift+Control+ArrowRight", "Shift+Control+ArrowRight", "Enter"]:
        text.press(key)
    # "[" selects the span before (Amazon); 1 then 3 relabel it and back.
    for key in ["[", "1", "3"]:
        text.press(key)
    # A span labelled by mistake, then deleted.
    for key in ["Escape", "End", "Shift+Control+ArrowLeft", "Enter", "Delete"]:
        text.press(key)
    expect(status).to_have_text("Removed Company: “Seattle.”.")
    expect(frame.get_by_role("list", name="Entities").get_by_role("listitem")).to_have_text(
        [
            "Person: “Jeff Bezos” (2–12) ×",
            "Company: “Amazon” (21–27) ×",
            "Date: “July 1994” (31–40) ×",
        ]
    )
    frame.get_by_role("radio", name="Technology").press("Space")
    # The element's own Submit button.
    ((name, answer),) = answer_fields(hit.submit(by_keyboard=True))
    assert name == "taskAnswers"
    stored = json.loads(answer)
    entities = stored[0]["crowd-entity-annotation"]["entities"]
    assert stored == [
        {
            "crowd-entity-annotation": {
                "entities": [
                    {"endOffset": 12, "label": "person", "startOffset": 2},
                    {"endOffset": 27, "label": "company", "startOffset": 21},
                    {"endOffset": 40, "label": "date", "startOffset": 31},
                ]
            },
            "tech": {"tech": True},
            "politics": {"politics": False},
        }
    ]
    spans = [NEWS[e["startOffset"] : e["endOffset"]] for e in entities]
    assert spans == ["Jeff Bezos", "Amazon", "July 1994"]
    assert hit.blocked == []


def test_entities_by_mouse_with_initial_value_flatten_objects(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, FORM_BODY, height=800)
    frame = hit.frame
    element = frame.locator("crowd-entity-annotation")
    # Inside a crowd-form the element brings no form of its own: one Submit button.
    expect(frame.get_by_role("button", name="Submit")).to_have_count(1)

    def centre(index: int) -> tuple[float, float]:
        # Page coordinates of a character: the frame's offset plus the character's box in it.
        box = element.locator(f'span[data-i="{index}"]').bounding_box()
        assert box is not None
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    def drag(first: int, last: int) -> None:
        hit.page.mouse.move(*centre(first))
        hit.page.mouse.down()
        hit.page.mouse.move(*centre(last), steps=6)
        hit.page.mouse.up()

    # Drag across "1903" (and the blank after it: blanks at the ends are left out) as a year.
    frame.get_by_role("radio", name="year").click()
    drag(44, 48)
    # Backwards across "1911".
    drag(65, 62)
    # Click the wrongly labelled "Paris" and make it a place; remove the "Nobel Prize" year.
    hit.page.mouse.click(*centre(37))
    frame.get_by_role("radio", name="place").click()
    frame.get_by_role("button", name="Remove year: “Nobel Prize”").click()
    expect(frame.get_by_role("list", name="Entities").get_by_role("listitem")).to_have_text(
        [
            "person: “Marie Curie” (0–11) ×",
            "place: “Paris” (35–40) ×",
            "year: “1903” (44–48) ×",
            "year: “1911” (62–66) ×",
        ]
    )
    assert answer_fields(hit.submit()) == [
        (
            "tagged.entities",
            '[{"endOffset":11,"label":"person","startOffset":0},'
            '{"endOffset":40,"label":"place","startOffset":35},'
            '{"endOffset":48,"label":"year","startOffset":44},'
            '{"endOffset":66,"label":"year","startOffset":62}]',
        )
    ]
    assert hit.blocked == []


REQUIRED_INSIDE = """
<crowd-entity-annotation name="ner" labels="['person']" text="Ada Lovelace wrote notes.">
  <crowd-input name="source" label="Where is the text from?" required></crowd-input>
</crowd-entity-annotation>
"""


def test_a_bare_element_checks_required_fields_put_inside_it(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, REQUIRED_INSIDE, height=600)
    frame = hit.frame
    frame.get_by_role("button", name="Submit").click()
    expect(frame.get_by_role("alert")).to_contain_text("is required")
    assert mturk.list_assignments_for_hit(HITId=hit.hit_id)["Assignments"] == []
    frame.get_by_label("Where is the text from?").fill("a letter")
    ((_, text),) = answer_fields(hit.submit())
    assert json.loads(text) == [{"ner": {"entities": []}, "source": "a letter"}]
    assert hit.blocked == []
