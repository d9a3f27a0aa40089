"""A finished Task 1 -> Task 2 workflow on the dashboard: stage graph, per-picture state, rounds over time.

Driven through the pipeline by hand (``run_step``, what the Celery task
runs, and the review pipeline's sync) with bots over HTTP: Task 1 seeded
from the seeds file, annotated and approved; two rounds of Task 2, each by
a worker who never saw the picture (the Task 1 annotator, and a worker
who only opened Task 1's HIT and returned it, are kept out). The
rounds stage counts parts of speech with :data:`STAND_IN_TAGGER`, a
deterministic stand-in for a real tagger (NLTK's data cannot be downloaded
here), installed as a real ``hitforge.taggers`` entry point.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup, Tag
from click.testing import CliRunner
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.campaigns import PublishedHIT
from hits.requester.tables.workflows import Chain, ChainRound
from hits.requester.text_metrics import tokens
from hits.requester.workflows.engine import stages_of
from hits.requester.workflows.publish import run_step
from hits.requester.workflows.setup import create_workflow
from server.cli.main import main
from tests.server.test_dashboard_roles import Dashboard, make_user
from tests.server.worker_helpers import WorkerClient
from tests.workflows.helpers import accept_round, refine_bot
from tests.workflows.test_refine_blinding import _round_hit, _sync
from tests.workflows.test_task1_redo import PERFECT, _bot, _workflow_file

#: The stand-in tagger's whole lexicon: a word's Penn tag is decided by this table alone.
LEXICON = {
    "NN": {"circle", "square", "triangle", "shapes", "shape", "background", "picture", "corner", "outlines"},
    "VB": {"is", "are", "drawn", "sits"},
    "JJ": {"red", "blue", "green", "yellow", "orange", "purple", "flat", "plain", "pale", "light"},
}
STAND_IN_TAGGER = f'''"""A deterministic stand-in for a part-of-speech tagger, for the test only."""
LEXICON = {LEXICON!r}


def tag(words):
    out = []
    for word in words:
        found = [t for t, known in LEXICON.items() if word.casefold() in known]
        out.append((word, "RB" if word.casefold().endswith("ly") else (found[0] if found else "DT")))
    return out
'''


def _expected_pos(text: str) -> dict[str, int]:
    """What the stand-in's counts must be, counted here from the lexicon."""
    words = tokens(text)
    return {
        "nouns": sum(w in LEXICON["NN"] for w in words),
        "verbs": sum(w in LEXICON["VB"] for w in words),
        "adjectives": sum(w in LEXICON["JJ"] for w in words),
        "adverbs": sum(w.endswith("ly") for w in words),
    }


def _install_stand_in_tagger(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny installed distribution whose ``hitforge.taggers`` entry point is the stand-in."""
    (folder / "standintagger.py").write_text(STAND_IN_TAGGER)
    info = folder / "standintagger-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: standintagger\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hitforge.taggers]\nstandin = standintagger:tag\n")
    monkeypatch.syspath_prepend(str(folder))


def _table(page: BeautifulSoup, table_id: str) -> list[list[str]]:
    table = page.find("table", id=table_id)
    assert isinstance(table, Tag), table_id
    body = table.find("tbody")
    assert isinstance(body, Tag)
    return [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in body.find_all("tr")]


def _headers(page: BeautifulSoup, table_id: str) -> list[str]:
    table = page.find("table", id=table_id)
    assert isinstance(table, Tag)
    return [th.get_text(strip=True) for th in table.find_all("th")]


def _shown(value: Any) -> str:
    return "-" if value is None else str(value)


def test_the_dashboard_shows_the_stage_graph_each_pictures_state_and_the_rounds_as_stored(
    tmp_path, monkeypatch, settings, live_server, requester, market, requester_sessions
) -> None:
    name = "iiw-dash"
    (tmp_path / "pkg").mkdir()
    _install_stand_in_tagger(tmp_path / "pkg", monkeypatch)
    truths = _workflow_file(tmp_path, "3.00", pictures=1, name=name)
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    # Two rounds whatever the similarity: the threshold cannot be reached below 1.0.
    spec["workflow"]["stages"][0]["rounds"] = {
        "max_rounds": 2,
        "jaccard_threshold": 1.0,
        "pos_tagger": "standin",
    }
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(tmp_path / "campaign.yaml"))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
        task1 = stages_of(session, workflow_id)[0].campaign_id
    hit_page = live_server.url + "/tasks/hit"
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1  # Task 1, seeded

    # Someone opens Task 1's HIT, sees the picture and gives the HIT back: shown it, never submitted.
    with session_scope(requester_sessions) as session:
        task1_hit = session.scalar(select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == task1))
    peeker = WorkerClient(live_server.url, "dash-peeker")
    work, frame = accept_round(peeker, str(task1_hit))
    assert peeker.get(frame).status_code == 200
    assert peeker.post_form(work, 'form[action$="/return"]', {}).status_code == 200

    annotator = _bot(live_server.url, "dash-annotator", PERFECT, truths, name)
    assert annotator.work_one() and annotator.result.submitted == 1
    _sync(requester_sessions, market)
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1  # round 1

    # Whoever annotated the picture in Task 1, or was only shown it there, never gets its Task 2
    # rounds: not listed, no preview, no accept.
    title = f"Improve a description {name}"
    writers = [
        refine_bot(live_server.url, f"dash-writer-{i}", PERFECT, truths["task2"], title) for i in (1, 2)
    ]
    for number, writer in enumerate(writers, start=1):
        hit_id = _round_hit(requester_sessions, workflow_id, number)
        assert annotator.http.get(live_server.url + f"/hits/{hit_id}").status_code == 403
        assert peeker.get(f"/hits/{hit_id}").status_code == 403
        assert not annotator.work_one()
        writer.sign_in()
        assert writer.work_one() and writer.result.submitted == 1
        _sync(requester_sessions, market)
        run_step(requester_sessions, market, workflow_id, hit_page)

    with session_scope(requester_sessions) as session:
        describe = stages_of(session, workflow_id)[1]
        chain = session.scalar(select(Chain).where(Chain.stage_id == describe.id))
        assert chain is not None and chain.status == "done"
        stored = session.scalars(
            select(ChainRound).where(ChainRound.chain_id == chain.id).order_by(ChainRound.round)
        ).all()
        rounds = [
            (r.round, r.status, r.worker_id, r.work_seconds, dict(r.metrics or {}), r.text) for r in stored
        ]
        chain_key = chain.key
    assert [(n, s) for n, s, *_ in rounds] == [(1, "approved"), (2, "approved")]
    assert {w for _, _, w, *_ in rounds} == {w.result.worker_id for w in writers}
    assert annotator.result.worker_id not in {w for _, _, w, *_ in rounds}
    assert len({w for _, _, w, *_ in rounds}) == 2  # nobody twice
    # The per-round record's parts of speech are the stand-in tagger's, counted on each round's text.
    for _, _, _, _, metrics, text in rounds:
        assert metrics["pos"] == _expected_pos(str(text)) and sum(metrics["pos"].values()) > 0

    owner = Dashboard(live_server.url, make_user(requester_sessions, "requester", market.access_key_id))
    shown = owner.get(f"/dashboard/campaigns/{task1}/workflow")
    assert shown.status_code == 200
    page = BeautifulSoup(shown.text, "html.parser")
    # The stage graph: Task 1 from the items file, Task 2 from Task 1.
    assert [row[:4] for row in _table(page, "stages")] == [
        ["objects", "items", "objects", "single"],
        ["describe", "objects", "refine", "rounds"],
    ]
    # Each picture: Task 1's seeds and its one approved assignment; Task 2's chain done at the limit.
    assert _table(page, "items") == [
        ["objects", chain_key, "1 of 1 in, 1 approved", "1", "1", "1", "0", "0", "-", "seeds: seeder file"]
    ]
    last = f"{rounds[-1][4]['jaccard']:.2f}"
    assert _table(page, "chains") == [
        ["describe", chain_key, "done", "2", "2", last, "-", "round limit: 2 rounds"]
    ]
    # Every round as stored, parts of speech included.
    pos_headers = ["adjectives", "adverbs", "nouns", "verbs"]
    assert _headers(page, "rounds")[-4:] == pos_headers
    assert _table(page, "rounds") == [
        [
            "describe", chain_key, str(n), "1", "approved", str(worker), _shown(round(secs, 1)),
            str(m["tokens"]), str(m["jaccard"]), str(m["edit_distance"]),
            *(str(m["pos"][p]) for p in pos_headers),
        ]
        for n, _, worker, secs, m, _ in rounds
    ]  # fmt: skip
    # Rounds over time: one picture a round, so each mean is that round's figure.
    assert _table(page, "round-summary") == [
        [
            "describe", str(n), "1", _shown(round(mean([round(secs, 1)]), 3)),
            _shown(round(float(m["tokens"]), 3)),
            _shown(round(float(m["jaccard"]), 3)), _shown(round(float(m["edit_distance"]), 3)),
            *(_shown(round(float(m["pos"][p]), 3)) for p in pos_headers),
        ]
        for n, _, _, secs, m, _ in rounds
    ]  # fmt: skip

    # The CLI's per-round record has the same parts-of-speech columns.
    env = {
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_VAR_DIR": str(settings.var_dir),
    }
    out = CliRunner().invoke(main, ["results", "rounds", name, "--per-round", "--format", "jsonl"], env=env)
    assert out.exit_code == 0, out.output
    lines = [json.loads(line) for line in out.output.splitlines()]
    assert [{p: r[f"pos_{p}"] for p in pos_headers} for r in lines] == [m["pos"] for *_, m, _ in rounds]


def test_a_pictures_rounds_wait_until_every_task1_assignment_of_it_is_in(
    tmp_path, live_server, market, requester_sessions
) -> None:
    """A round made while Task 1 still had an open assignment could go to a worker who then annotates."""
    name = "iiw-wait-all"
    truths = _workflow_file(tmp_path, "3.00", pictures=1, name=name)
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    spec["assignments_per_hit"] = 2
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(tmp_path / "campaign.yaml"))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
    hit_page = live_server.url + "/tasks/hit"
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1

    first, second = (_bot(live_server.url, f"wait-all-{i}", PERFECT, truths, name) for i in (1, 2))
    assert first.work_one()
    _sync(requester_sessions, market)
    # One approved annotation is in, but the HIT's other assignment is still open: no round yet.
    assert run_step(requester_sessions, market, workflow_id, hit_page).created == 0
    assert second.work_one()
    _sync(requester_sessions, market)
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1
    hit_id = _round_hit(requester_sessions, workflow_id, 1)
    for annotator in (first, second):
        assert annotator.http.get(live_server.url + f"/hits/{hit_id}").status_code == 403
    assert WorkerClient(live_server.url, "wait-all-new").get(f"/hits/{hit_id}").status_code == 200
