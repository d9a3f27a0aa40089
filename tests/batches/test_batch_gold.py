"""Gold rows in a batch's CSV: scored by field equality, never visible on the page."""

from __future__ import annotations

import difflib
import json
import re
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from bs4 import BeautifulSoup, Tag
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.batches.plan import BatchSettings, create_batch
from hits.requester.batches.publish import publish_batch
from hits.requester.batches.results import result_rows
from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.quality.followups import campaign_spec
from hits.requester.tables.batches import Batch, BatchRow
from hits.requester.tables.campaigns import Campaign, GoldItem, HITSlot, PublishedHIT
from hits.requester.templates.batch.gold import score_fields
from hits.requester.templates.batch.matching import values_match
from tests.batches.test_batch_flow import hit_ids
from tests.server.worker_helpers import WorkerClient

LAYOUT = """<h3>Count the animals</h3>
<img src="${image_url}" alt="${alt}">
<p><label>How many? <input name="count" type="number"></label></p>
<p><label>Which animal? <input name="animal"></label></p>
<p><label><input type="checkbox" name="tags" value="cat"> cat</label>
<label><input type="checkbox" name="tags" value="dog"> dog</label></p>
"""
CSV = (
    "image_url,alt,Gold.count,Gold.animal\n"
    "https://example.org/1.jpg,A field,,\n"
    "https://example.org/2.jpg,A yard,3,cat\n"
    "https://example.org/3.jpg,A road,,\n"
)


def make(  # type: ignore[no-untyped-def]
    requester_sessions,
    tmp_path: Path,
    csv: str = CSV,
    layout: str = LAYOUT,
    settings_path: Path | None = None,
    **settings: object,
) -> int:
    (tmp_path / "layout.html").write_text(layout, encoding="utf-8")
    (tmp_path / "input.csv").write_text(csv, encoding="utf-8")
    chosen = BatchSettings.model_validate(
        {"title": "Count the animals", "description": "Count them.", "reward": "0.10", **settings}
    )
    with session_scope(requester_sessions) as session:
        return create_batch(
            session,
            f"animals-{uuid.uuid4().hex[:6]}",
            tmp_path / "layout.html",
            tmp_path / "input.csv",
            chosen,
            settings_path,
        ).id


def test_field_equality_with_a_tolerance_and_optional_text_normalising() -> None:
    assert values_match("3", "3.0") and values_match("2.96", "3", tolerance=0.05)
    assert not values_match("2.9", "3", tolerance=0.05) and values_match("0.30000000000000004", "0.3")
    assert not values_match(" Cat", "cat") and values_match(
        "  Tabby\n cat ", "tabby cat", normalise_text=True
    )
    # Several values of one field (checkboxes) are a set; an answer that is not a number is not 3.
    assert values_match("dog|cat", "cat|dog") and not values_match("dog", "cat|dog")
    assert not values_match("three", "3")
    key = {"count": "3", "animal": "cat"}
    assert score_fields({"count": "3", "animal": "cat"}, key, {}) == 1.0
    assert score_fields({"count": "4", "animal": "cat"}, key, {}) == 0.5
    assert score_fields({"count": "3.2", "animal": "CAT "}, key, {"gold_tolerance": 0.5}) == 0.5
    opts = {"gold_tolerance": 0.5, "gold_normalise_text": True}
    assert score_fields({"count": "3.2", "animal": "CAT "}, key, opts) == 1.0
    assert score_fields({}, key, {}) == 0.0  # nothing answered: nothing right
    # A <crowd-form> answer: the field is a dotted path in taskAnswers' object.
    crowd = {"taskAnswers": json.dumps([{"sentiment": {"label": "Positive"}, "sure": {"yes": True}, "n": 3}])}
    assert score_fields(crowd, {"sentiment.label": "Positive", "sure.yes": "true", "n": "3"}, {}) == 1.0
    assert score_fields(crowd, {"sentiment.label": "Negative"}, {}) == 0.0


def test_gold_columns_are_split_off_stored_apart_and_never_in_the_results(
    live_server, market, requester_sessions, tmp_path
) -> None:
    batch_id = make(requester_sessions, tmp_path, gold_tolerance=0.5, quality={"min_gold": 2})
    with session_scope(requester_sessions) as session:
        batch = session.get(Batch, batch_id)
        assert batch is not None and batch.columns == ["image_url", "alt"]
        rows = session.scalars(
            select(BatchRow).where(BatchRow.batch_id == batch_id).order_by(BatchRow.position)
        )
        assert [sorted(r.inputs) for r in rows] == [["alt", "image_url"]] * 3
        slots = session.scalars(
            select(HITSlot).where(HITSlot.published_hit_id.in_([r.published_hit_id for r in batch.rows]))
        ).all()
        gold = [s.gold_item for s in slots if s.gold_item is not None]
        assert len(slots) == 3 and [(g.payload["alt"], g.answer) for g in gold] == [
            ("A yard", {"count": "3", "animal": "cat"})
        ]
        campaign = session.get(Campaign, batch.campaign_id)
        assert campaign is not None and campaign.template == "batch"
        # The follow-ups (bonus, re-post, message) read the campaign as a campaign file states it.
        spec = campaign_spec(campaign)
        assert spec.quality.min_gold == 2 and spec.quality.signals == []
        assert spec.template_options == {
            "gold_tolerance": 0.5,
            "gold_normalise_text": False,
            "gold_field_tolerance": {},
            "gold_pass_score": 1.0,
        }
    publish_batch(requester_sessions, market, batch_id)
    no_gold = make(requester_sessions, tmp_path, csv="image_url,alt\na,b\n")
    publish_batch(requester_sessions, market, no_gold)
    with session_scope(requester_sessions) as session:
        # The gold batch's HITs are open to the review pipeline; one without gold is left to
        # its requester's results file, as on MTurk.
        assert [published_status(session, batch_id), published_status(session, no_gold)] == [
            {"open"},
            {"pending"},
        ]
    hits = hit_ids(requester_sessions, batch_id)
    question = market.get_hit(hits[1])["Question"]
    assert "A yard" in question and "Gold" not in question and "cat</label>" in question
    worker = WorkerClient(live_server.url, "gold")
    assignment = accept_and_post(worker, hits[1], {"count": "3", "animal": "cat"})
    header, out = result_rows(requester_sessions, market, batch_id)
    assert not [c for c in header if "Gold" in c]
    assert [c for c in header if c.startswith("Input.")] == ["Input.image_url", "Input.alt"]
    (row,) = [r for r in out if r["AssignmentId"] == assignment]
    assert (row["Answer.count"], row["Answer.animal"]) == ("3", "cat")


def published_status(session, batch_id: int) -> set[str]:  # type: ignore[no-untyped-def]
    rows = session.scalars(select(BatchRow.published_hit_id).where(BatchRow.batch_id == batch_id))
    return set(session.scalars(select(PublishedHIT.status).where(PublishedHIT.id.in_(list(rows)))))


def accept(worker: WorkerClient, hit_id: str) -> tuple[requests.Response, str]:
    """Accept this HIT from its preview page; the work page and the assignment id."""
    preview = worker.get(f"/hits/{hit_id}")
    accepted = worker.post_form(preview, f'form[action$="/hits/{hit_id}/accept"]', {})
    assert accepted.status_code == 200 and "/work/" in accepted.url, accepted.text
    return accepted, accepted.url.rsplit("/", 1)[-1]


def accept_and_post(worker: WorkerClient, hit_id: str, answers: dict[str, str]) -> str:
    """Accept the HIT and post its form as the frame's browser would; the assignment id."""
    accepted, assignment_id = accept(worker, hit_id)
    frame = BeautifulSoup(accepted.text, "html.parser").find("iframe", id="hit-frame")
    assert isinstance(frame, Tag)
    token = parse_qs(urlsplit(str(frame["src"])).query)["hitforgeToken"][0]
    posted = requests.post(
        f"{worker.base}/mturk/externalSubmit",
        data={"assignmentId": assignment_id, "hitforgeToken": token, **answers},
    )
    assert posted.status_code == 200
    return assignment_id


def test_a_layout_naming_a_gold_column_or_a_bare_gold_column_is_refused(requester_sessions, tmp_path) -> None:
    with pytest.raises(InputFileErrors) as leak:
        make(
            requester_sessions,
            tmp_path,
            layout=LAYOUT + "<p>${Gold.count}</p>\n<script>`${ Gold.animal }`</script>",
        )
    assert [(e.line, e.field) for e in leak.value.errors] == [(7, "Gold.count"), (8, "Gold.animal")]
    assert "gold answers are never shown to workers" in str(leak.value)
    with pytest.raises(InputFileError, match=r"line 1: the column 'Gold\.' names no field"):
        make(requester_sessions, tmp_path, csv="image_url,alt,Gold.\na,b,c\n")


def neutral(text: str, hit_id: str, inputs: dict[str, str], assignment_id: str = "") -> str:
    """A page with the HIT's id, the assignment's and the row's own input values taken out."""
    text = text.replace(hit_id, "HITID")
    if assignment_id:
        text = text.replace(assignment_id, "ASSIGNMENTID")
    for value in sorted(inputs.values(), key=len, reverse=True):
        text = text.replace(value, "INPUT")
    # The frame URL's signed token and the form's CSRF token differ for every page alike.
    text = re.sub(r'(name="csrf_token" value=")[^"]+', r"\1CSRF", text)
    # The due time follows the moment of accepting: two accepts a second apart may
    # straddle a minute and show different minutes, gold or not.
    text = re.sub(r"due by \d{4}-\d\d-\d\d \d\d:\d\d UTC", "due by DUE", text)
    return re.sub(r"(hitforgeToken=)[^&\"']+", r"\1TOKEN", text)


def frame_of(worker: WorkerClient, page: requests.Response) -> str:
    frame = BeautifulSoup(page.text, "html.parser").find("iframe", id="hit-frame")
    assert isinstance(frame, Tag)
    inner = requests.get(worker.base + str(frame["src"]))  # the sandboxed frame sends no cookie
    assert inner.status_code == 200
    return inner.text


def worker_views(worker: WorkerClient, hit_id: str, inputs: dict[str, str]) -> list[str]:
    """What a worker's browser gets for a HIT, neutralised: preview, its frame, the accepted
    assignment's page and its frame."""
    preview = worker.get(f"/hits/{hit_id}")
    assert preview.status_code == 200
    accepted, assignment_id = accept(worker, hit_id)
    pages = [preview.text, frame_of(worker, preview), accepted.text, frame_of(worker, accepted)]
    return [neutral(p, hit_id, inputs, assignment_id) for p in pages]


def test_a_gold_rows_page_differs_from_another_rows_only_by_its_inputs(
    live_server, market, requester_sessions, tmp_path
) -> None:
    batch_id = make(requester_sessions, tmp_path, assignments=2)
    publish_batch(requester_sessions, market, batch_id)
    hits = hit_ids(requester_sessions, batch_id)
    with session_scope(requester_sessions) as session:
        rows = session.scalars(
            select(BatchRow).where(BatchRow.batch_id == batch_id).order_by(BatchRow.position)
        )
        inputs = [dict(r.inputs) for r in rows]
        gold_payloads = session.scalars(
            select(GoldItem.payload).join(HITSlot, HITSlot.gold_item_id == GoldItem.id)
        )
        assert inputs[1] in list(gold_payloads)  # the second row is the gold one
    listing = WorkerClient(live_server.url, "lister").get("/").text
    assert "Count the animals" in listing and "Gold" not in listing
    # Two workers, each taking one gold and one ordinary HIT, in either order.
    first, second = WorkerClient(live_server.url, "first"), WorkerClient(live_server.url, "second")
    gold_first = worker_views(first, hits[1], inputs[1])
    plain_first = worker_views(first, hits[0], inputs[0])
    plain_second = worker_views(second, hits[2], inputs[2])
    gold_second = worker_views(second, hits[1], inputs[1])
    for gold, plain in ((gold_first, plain_first), (gold_second, plain_second)):
        for gold_page, plain_page in zip(gold, plain, strict=True):
            assert gold_page == plain_page, "\n".join(
                difflib.unified_diff(plain_page.split("\n"), gold_page.split("\n"))
            )
    # The pages do show the row's inputs (the comparison above is not comparing empty pages).
    assert "INPUT" in gold_first[1] and "HITID" in gold_first[0] and "Count the animals" in gold_first[1]


def test_gold_settings_from_the_command_line_and_a_budget_below_the_cost_refused(
    live_server, settings, requester, requester_sessions, tmp_path
) -> None:
    from click.testing import CliRunner

    from server.cli.main import main
    from tests.batches.test_batch_cli import cli_env

    (tmp_path / "layout.html").write_text(LAYOUT, encoding="utf-8")
    (tmp_path / "input.csv").write_text(CSV, encoding="utf-8")
    base = ["batch", "publish", str(tmp_path / "layout.html"), str(tmp_path / "input.csv")]
    base += ["--title", "Count", "--description", "Count them.", "--reward", "0.10"]
    env = cli_env(settings, requester)
    name = f"cli-gold-{uuid.uuid4().hex[:6]}"
    low = CliRunner().invoke(main, [*base, "--name", name, "--budget", "0.20"], env=env)
    assert low.exit_code == 2 and "the budget 0.20 is below the batch's planned cost 0.36" in low.output
    assert "Traceback" not in low.output
    bad = CliRunner().invoke(main, [*base, "--name", name, "--gold-tolerance", "-1"], env=env)
    assert bad.exit_code == 2 and "field '--gold-tolerance'" in bad.output
    made = CliRunner().invoke(
        main,
        [
            *base,
            "--name",
            name,
            "--gold-tolerance",
            "0.5",
            "--gold-normalise-text",
            "--gold-pass-share",
            "0.5",
        ]
        + ["--budget", "2"],
        env=env,
    )
    assert made.exit_code == 0, made.output
    with session_scope(requester_sessions) as session:
        batch = session.scalar(select(Batch).where(Batch.name == name))
        assert batch is not None
        campaign = session.get(Campaign, batch.campaign_id)
        assert campaign is not None and str(campaign.budget) == "2.00"
        assert campaign.spec["template_options"] == {
            "gold_tolerance": 0.5,
            "gold_normalise_text": True,
            "gold_field_tolerance": {},
            "gold_pass_score": 0.5,
        }
