"""The simulated crowd works a ``<crowd-form>`` layout batch: the questions are read from the
crowd elements, answered in crowd-form's shape, and gold rows score by dotted path."""

from __future__ import annotations

import json
import uuid

from demo.crowd import PROFILES
from demo.crowd.layout_bot import LayoutBot, read_page
from hits.requester.batches.publish import publish_batch
from hits.requester.batches.results import result_rows
from hits.requester.templates.batch.gold import score_fields
from tests.batches.test_batch_gold import make

LAYOUT = """<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>
<crowd-form>
  <p>${review}</p>
  <crowd-classifier name="sentiment" categories="['Positive', 'Negative', 'Neutral']"
    header="Tone"></crowd-classifier>
  <crowd-checkbox name="flags" value="spoiler">spoiler</crowd-checkbox>
  <crowd-checkbox name="flags" value="rude">rude</crowd-checkbox>
  <crowd-radio-group>
    <crowd-radio-button name="short" value="short">short</crowd-radio-button>
    <crowd-radio-button name="long" value="long">long</crowd-radio-button>
  </crowd-radio-group>
  <crowd-slider name="stars" min="1" max="5"></crowd-slider>
  <crowd-input name="summary" label="In a few words"></crowd-input>
</crowd-form>
"""
REVIEWS = {
    "Loved every minute.": "Positive",
    "A waste of an evening.": "Negative",
    "It was a film.": "Neutral",
    "Best thing this year.": "Positive",
}


def test_read_page_finds_the_crowd_elements_questions() -> None:
    form = read_page(LAYOUT)
    assert form.crowd
    found = {q.name: (q.kind, q.options) for q in form.questions}
    assert found["sentiment"] == ("classifier", ["Positive", "Negative", "Neutral"])
    assert found["flags"] == ("multi", ["spoiler", "rude"])
    assert ("choice", ["short", "long"]) in found.values()  # the radio group, by its buttons
    assert found["stars"][0] == "number" and found["summary"][0] == "text"


def test_bots_answer_a_crowd_form_batch_in_its_shape_and_gold_scores_by_path(
    live_server, market, requester_sessions, tmp_path
) -> None:
    lines = ["review,Gold.sentiment.label"]
    lines += [f"{text},{label if i % 2 else ''}" for i, (text, label) in enumerate(REVIEWS.items())]
    title = f"Tone {uuid.uuid4().hex[:6]}"
    batch_id = make(
        requester_sessions, tmp_path, csv="\n".join(lines) + "\n", layout=LAYOUT, title=title, assignments=2
    )
    publish_batch(requester_sessions, market, batch_id)
    truth = {
        text: {"sentiment.label": label, "short.short": "true", "stars": "4", "summary": "fine"}
        for text, label in REVIEWS.items()
    }
    crowd = [
        LayoutBot(live_server.url, f"{p}-{uuid.uuid4().hex[:6]}", PROFILES[p], truth, seed=1)
        for p in ("diligent", "spammer")
    ]
    for bot in crowd:
        bot.title_filter = title
        result = bot.run(max_hits=len(REVIEWS))
        assert (result.submitted, result.errors) == (len(REVIEWS), [])
    header, rows = result_rows(requester_sessions, market, batch_id)
    assert [c for c in header if c.startswith(("Input.", "Answer."))] == [
        "Input.review",
        "Answer.taskAnswers",
    ]
    scores: dict[str, list[float]] = {}
    for row in rows:
        (answer,) = json.loads(row["Answer.taskAnswers"])
        # crowd-form's shapes: a classifier's label, {value: bool} per checkbox and radio button.
        assert answer["sentiment"]["label"] in ("Positive", "Negative", "Neutral")
        assert set(answer["flags"]) == {"spoiler", "rude"} and set(answer["short"]) == {"short"}
        assert isinstance(answer["long"]["long"], bool) and answer["short"]["short"] != answer["long"]["long"]
        expected = REVIEWS[row["Input.review"]]
        score = score_fields({"taskAnswers": row["Answer.taskAnswers"]}, {"sentiment.label": expected}, {})
        scores.setdefault(row["WorkerId"], []).append(score)
    diligent, spammer = (b.result.worker_id for b in crowd)
    # Four rows each (a spammer's luck on four three-way choices is not tested here: the
    # batch crowd test catches spammers over many gold rows).
    assert len(scores[diligent]) == len(scores[spammer]) == len(REVIEWS) and sum(scores[diligent]) >= 3
