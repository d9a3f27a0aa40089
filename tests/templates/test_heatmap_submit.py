"""A heatmap page's answers and requests checked on the server against what the page was really shown.

Over HTTP against the live server, as a worker who edits the page's form
(its hidden list of models, the sentence, the prompt, the "missing" marks)
or calls the heatmap endpoint out of order. The built-in model always
answers; the HTTP one is on a private address the operator did not allow,
so each of its requests fails and is logged as failed.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from bs4 import BeautifulSoup, Tag
from sqlalchemy import func, select

from hits.db import session_scope
from hits.requester.tables.campaigns import Submission
from hits.requester.tables.heatmaps import HeatmapRequest
from hits.requester.templates.heatmap import QUESTIONS
from tests.server.worker_helpers import accept_framed, csrf_of
from tests.templates.test_heatmap_live import launch, make, rate_made

MODELS = {
    "zebranet-seven": {"provider": "builtin", "spread": 0.1},
    "quokkaformer": {"provider": "http", "url": "http://127.0.0.1:9/good"},
}
PROMPTS = ("a shadow at the top left", "bright area lower right")


def _rows(requester_sessions, assignment_id: str) -> int:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(HeatmapRequest)
                .where(HeatmapRequest.assignment_id == assignment_id)
            )
            or 0
        )


def _form(page_text: str, page: Any) -> dict[str, str]:
    form = BeautifulSoup(page_text, "html.parser").find("form", id="task-form")
    assert isinstance(form, Tag)
    data = {str(i["name"]): str(i.get("value", "")) for i in form.find_all("input", type="hidden")}
    data["csrf_token"] = csrf_of(page)
    return data


def _answered(data: dict[str, str], shown: dict[int, tuple[dict, dict]]) -> dict[str, str]:
    """The form as the page's script fills it: each heatmap shown rated, each one that failed missing."""
    out = dict(data)
    for position, rounds in shown.items():
        out[f"heatmap-{position}-sentence"] = "0"
        out[f"heatmap-{position}-prompt"] = PROMPTS[position]
        rate_made(out, position, rounds, 4)
    return out


def test_a_submit_must_rate_every_model_for_the_sentence_and_prompt_shown_and_missing_only_if_failed(
    tmp_path, live_server, market, requester_sessions
) -> None:
    hit_id, _ = launch(tmp_path, market, requester_sessions, live_server.url, "", "hm-submit", models=MODELS)
    worker, frame = accept_framed(live_server.url, hit_id, "tamperer")
    page = worker.get("/tasks/hit?" + urlencode(frame))
    data = _form(page.text, page)
    tokens = data["heatmap-0-models"].split(",")
    assert len(tokens) == 2

    def refused(form: dict[str, str], field: str) -> None:
        answer = worker.http.post(live_server.url + "/tasks/submit", data=form, timeout=30)
        assert answer.status_code == 422, (field, answer.text[:300])
        assert field in answer.text, (field, answer.text)

    # Every model marked missing, before any heatmap was asked for.
    nothing_shown = {**data, "heatmap-0-sentence": "0", "heatmap-1-sentence": "0"}
    for position in (0, 1):
        nothing_shown[f"heatmap-{position}-prompt"] = PROMPTS[position]
        for part in ("report", "custom"):
            for token in data[f"heatmap-{position}-models"].split(","):
                nothing_shown[f"heatmap-{position}-{part}-{token}-missing"] = "1"
    refused(nothing_shown, "heatmap-0-sentence")

    shown = {
        position: (
            make(live_server.url, frame, position=str(position), round="report", sentence="0").json(),
            make(
                live_server.url, frame, position=str(position), round="custom", prompt=PROMPTS[position]
            ).json(),
        )
        for position in (0, 1)
    }
    assert all(
        sorted(h["ok"] for h in made["heatmaps"]) == [False, True] for r in shown.values() for made in r
    )
    good = _answered(data, shown)
    ok_token = next(h["token"] for h in shown[0][0]["heatmaps"] if h["ok"])
    failed_token = next(h["token"] for h in shown[0][1]["heatmaps"] if not h["ok"])

    # One model of two left out of the hidden list (and its ratings with it).
    dropped = {k: v for k, v in good.items() if failed_token not in k}
    dropped["heatmap-0-models"] = ok_token
    refused(dropped, "heatmap-0-models")
    # A model whose heatmap came, marked missing instead of rated.
    hidden = {k: v for k, v in good.items() if not k.startswith(f"heatmap-0-report-{ok_token}-")}
    refused({**hidden, f"heatmap-0-report-{ok_token}-missing": "1"}, f"heatmap-0-report-{ok_token}-missing")
    # A model whose heatmap failed, rated as if it had come.
    rated = {k: v for k, v in good.items() if k != f"heatmap-0-custom-{failed_token}-missing"}
    rated.update({f"heatmap-0-custom-{failed_token}-{q}": "5" for q in QUESTIONS})
    refused(rated, f"heatmap-0-custom-{failed_token}")
    # Another sentence than the one whose heatmaps were shown (gold would be scored on it).
    refused({**good, "heatmap-1-sentence": "1"}, "heatmap-1-sentence")
    # A prompt whose heatmaps were never made.
    refused({**good, "heatmap-1-prompt": "a prompt nobody asked the models about"}, "heatmap-1-prompt")
    with session_scope(requester_sessions) as session:
        assert (
            session.scalar(select(Submission).where(Submission.assignment_id == frame["assignmentId"]))
            is None
        )

    handoff = worker.http.post(live_server.url + "/tasks/submit", data=good, timeout=30)
    assert handoff.status_code == 200 and 'id="handoff"' in handoff.text, handoff.text[:2000]
    with session_scope(requester_sessions) as session:
        stored = session.scalar(select(Submission).where(Submission.assignment_id == frame["assignmentId"]))
        assert stored is not None
        for position, answer in enumerate(stored.answers["answers"]):
            assert answer["sentence"] == 0 and answer["prompt"] == PROMPTS[position]
            assert answer["report"]["zebranet-seven"] == dict.fromkeys(QUESTIONS, 4)
            assert answer["report"]["quokkaformer"] is None and answer["custom"]["quokkaformer"] is None


def test_own_prompts_wait_for_round_ones_choice_and_may_not_be_a_report_sentence(
    tmp_path, live_server, market, requester_sessions
) -> None:
    hit_id, _ = launch(
        tmp_path, market, requester_sessions, live_server.url, "", "hm-order", models=MODELS, max_prompt=40
    )
    worker, frame = accept_framed(live_server.url, hit_id, "orderly")
    base = live_server.url
    # The prompt box holds what the campaign allows (max_prompt), and the server says the same.
    page = BeautifulSoup(worker.get("/tasks/hit?" + urlencode(frame)).text, "html.parser")
    assert {str(box["maxlength"]) for box in page.select("input.prompt-input")} == {"40"}

    # Before round one's choice no live heatmap is made, whatever the prompt.
    for prompt in ("A faint shadow in the upper left.", "anything at all"):
        early = make(base, frame, position="0", round="custom", prompt=prompt)
        assert early.status_code == 409 and "report sentence" in early.json()["error"], early.text
    assert _rows(requester_sessions, frame["assignmentId"]) == 0  # nothing asked, nothing spent

    assert make(base, frame, position="0", round="report", sentence="0").status_code == 200
    # A report sentence typed out (case, spacing and punctuation aside) is no prompt of one's own:
    # the chosen one and, above all, the others, whose heatmaps round one never showed.
    for prompt, number in (("the RIGHT side   is clear", 2), ("a faint shadow, in the upper left!", 1)):
        copied = make(base, frame, position="0", round="custom", prompt=prompt)
        assert copied.status_code == 400, copied.text
        assert f"report sentence {number}" in copied.json()["error"]
    long = make(base, frame, position="0", round="custom", prompt="x" * 41)
    assert long.status_code == 400 and "keep it to 40" in long.json()["error"]
    made = _rows(requester_sessions, frame["assignmentId"])
    own = make(base, frame, position="0", round="custom", prompt="the right side is clear of shadows")
    assert own.status_code == 200 and len(own.json()["heatmaps"]) == 2
    assert _rows(requester_sessions, frame["assignmentId"]) == made + 2
    # The other image still waits for its own round one.
    assert make(base, frame, position="1", round="custom", prompt="anything at all").status_code == 409
