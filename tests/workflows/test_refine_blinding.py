"""Provenance is blinded and a picture is never given twice: what two round workers get, searched."""

from __future__ import annotations

import re
from html import escape as html_escape

import requests
from bs4 import Tag
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.files.campaign import load_campaign_file
from hits.requester.quality import pipeline, sync_queue
from hits.requester.tables.campaigns import PublishedHIT
from hits.requester.tables.workflows import Chain, ChainRound, WorkflowStage
from hits.requester.workflows.publish import run_step
from hits.requester.workflows.setup import create_workflow
from tests.server.worker_helpers import WorkerClient, csrf_of, soup
from tests.workflows.helpers import write_refine_workflow

#: Words that would tell a worker where the text came from (matched as whole words, any case).
TELLTALES = [
    "seed",
    "seeded",
    "seeder",
    "builtin",
    "model",
    "machine",
    "generated",
    "human",
    "person",
    "round",
    "rounds",
    "attempt",
    "previous worker",
    "another worker",
    "items file",
    "ai",
]


def _round_hit(sessions, workflow_id: int, number: int) -> str:  # type: ignore[no-untyped-def]
    """The marketplace id of a round's HIT (the first picture's) in the workflow."""
    with session_scope(sessions) as session:
        hit_id = session.scalar(
            select(PublishedHIT.mturk_hit_id)
            .join(ChainRound, ChainRound.published_hit_id == PublishedHIT.id)
            .join(Chain, Chain.id == ChainRound.chain_id)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(ChainRound.round == number, WorkflowStage.workflow_id == workflow_id)
            .order_by(ChainRound.id)
            .limit(1)
        )
    assert hit_id
    return str(hit_id)


def _work(worker: WorkerClient, hit_id: str, text_for: callable) -> list[requests.Response]:  # type: ignore[valid-type]
    """Everything the worker site and the HIT page send a worker doing one HIT, in order."""
    got = [worker.get("/")]
    preview = worker.get(f"/hits/{hit_id}")
    got.append(preview)
    framed = soup(preview).find("iframe", id="hit-frame")
    assert isinstance(framed, Tag)
    got.append(worker.get(str(framed["src"])))  # the HIT page's preview
    work = worker.post_form(preview, f'form[action="/hits/{hit_id}/accept"]', {})
    got.append(work)
    frame = soup(work).find("iframe", id="hit-frame")
    assert isinstance(frame, Tag)
    page = worker.get(str(frame["src"]))
    got.append(page)
    form = soup(page).find("form", id="task-form")
    assert isinstance(form, Tag)
    for img in form.find_all("img"):
        got.append(worker.http.get(requests.compat.urljoin(page.url, str(img["src"]))))
    fields = {str(i["name"]): str(i.get("value", "")) for i in form.find_all("input") if i.get("name")}
    box = form.find("textarea")
    assert isinstance(box, Tag)
    fields["text-0"] = text_for(box.get_text())
    handoff = worker.http.post(requests.compat.urljoin(page.url, str(form["action"])), data=fields)
    got.append(handoff)
    out = soup(handoff).find("form", id="handoff")
    assert isinstance(out, Tag), handoff.text
    data = {str(i["name"]): str(i.get("value", "")) for i in out.find_all("input") if i.get("name")}
    got.append(worker.http.post(str(out["action"]), data=data))
    got.append(worker.get("/"))
    return got


def _sync(sessions, market) -> None:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        targets = sync_queue.open_hits(session, market.access_key_id)
    fetched = pipeline.fetch_hits(market, targets)
    with session_scope(sessions) as session:
        pipeline.review_hits(session, fetched)


def _searchable(responses: list[requests.Response], round_hits: set[str]) -> str:
    """Everything in ``responses``, but of the HIT list only the rows of the workflow's round HITs.

    The list also shows the HITs other tests of the session published (their titles may well
    say "generated"); what this workflow tells its workers is in its own rows.
    """
    parts = []
    for r in responses:
        parts.append(r.url)
        parts.extend(f"{k}: {v}" for k, v in r.headers.items())
        for earlier in r.history:
            parts.append(earlier.url)
            parts.extend(f"{k}: {v}" for k, v in earlier.headers.items())
        if "image" not in r.headers.get("Content-Type", ""):
            html = soup(r)
            for row in html.select("tr[data-hit-id]"):
                if row["data-hit-id"] not in round_hits:
                    row.decompose()
            parts.append(str(html))
    return "\n".join(parts)


def test_a_round_worker_cannot_tell_who_wrote_the_text_and_never_gets_the_picture_again(
    tmp_path, live_server, market, requester_sessions
) -> None:
    name = "refine-blind"
    path, _truth = write_refine_workflow(tmp_path, name, pictures=1, complete=0)
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(path))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
    hit_page = live_server.url + "/tasks/hit"
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1

    first = WorkerClient(live_server.url, "blind-a")
    written = "A red shape and a blue shape sit on a pale background in this drawing."
    first_hit = _round_hit(requester_sessions, workflow_id, 1)
    seen_first = _work(first, first_hit, lambda _old: written)
    _sync(requester_sessions, market)
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1
    second_hit = _round_hit(requester_sessions, workflow_id, 2)

    # The first worker no longer sees the picture: not listed, no preview, no accept (by HIT or group).
    assert second_hit not in first.get("/").text
    assert first.get(f"/hits/{second_hit}").status_code == 403
    with session_scope(requester_sessions) as session:
        chain = session.scalar(
            select(Chain)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(WorkflowStage.workflow_id == workflow_id)
        )
        assert chain is not None
        key, seed = chain.key, str(chain.seed_text)
    second = WorkerClient(live_server.url, "blind-b")
    seen_second = _work(second, second_hit, lambda old: old + " The shapes do not touch.")

    # Round 2 showed the first worker's text, round 1 the seeder's; nothing else tells them apart.
    assert written in seen_second[4].text and seed in seen_first[4].text
    for seen, other in ((seen_first, None), (seen_second, first)):
        everything = _searchable(seen, {first_hit, second_hit})
        for word in TELLTALES:
            assert not re.search(rf"\b{re.escape(word)}\b", everything, re.IGNORECASE), word
        assert key not in everything and "#r" not in everything
        if other is not None:
            assert other.worker_id not in everything and other.username not in everything

    def skeleton(response: requests.Response, text: str) -> str:
        shown = html_escape(text)
        html = response.text.replace(f'data-current="{shown}"', "").replace(
            f">{shown}</textarea>", "></textarea>"
        )
        return re.sub(r'(value|src|nonce|action)="[^"]*"', r'\1=""', html)

    assert skeleton(seen_first[4], seed) == skeleton(seen_second[4], written)

    # Round 3: both earlier workers are refused it when accepting by its group (HIT type), a new one is not.
    _sync(requester_sessions, market)
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1
    third = market.get_hit(_round_hit(requester_sessions, workflow_id, 3))
    for worker in (first, second):
        refused = worker.http.post(
            live_server.url + f"/groups/{third['HITTypeId']}/accept",
            data={"csrf_token": csrf_of(worker.get("/"))},
        )
        assert "/work/" not in refused.url
    newcomer = WorkerClient(live_server.url, "blind-c")
    taken = newcomer.http.post(
        live_server.url + f"/groups/{third['HITTypeId']}/accept",
        data={"csrf_token": csrf_of(newcomer.get("/"))},
    )
    assert "/work/" in taken.url
