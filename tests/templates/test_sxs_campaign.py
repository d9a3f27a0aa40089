"""An sxs campaign over HTTP: blinding holds, sides are unscrambled on the server, the study's table."""

from __future__ import annotations

import csv
import io
import json
import re
import threading
from collections import Counter
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag
from sqlalchemy import select

from demo.tasks import get_demo_task, truth_key
from demo.tasks.sxs import SYSTEMS, preferences
from hits.db import session_scope
from hits.requester.quality.aggregation import aggregate_campaign, campaign_agreement, majority_confidence
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.tables.templates import SlotArrangement
from hits.requester.templates.sxs import METRICS
from tests.helpers import (
    hidden_fields,
    hitforge_results,
    launch_template_campaign,
    name_a_model_in,
    names_in,
    pixels_only,
    publish_campaign_file,
    sync_marketplace_answers,
)
from tests.server.worker_helpers import accept_framed, csrf_of


def _items(folder) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    rows = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    return {row["id"]: row["item"] for row in rows}


def _true_preferences(folder, truth) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
    """Each item's true preferences in item terms (positive: its second candidate better)."""
    out = {}
    for item_id, item in _items(folder).items():
        first, second = (c["text"] for c in item["candidates"])
        quality = truth[truth_key(item["image"], [first, second])]
        out[item_id] = preferences(quality[first], quality[second])
    return out


def test_careful_workers_preferences_survive_random_sides_and_make_the_table(
    tmp_path, settings, market, mturk, requester_sessions, careful_campaign
) -> None:
    name = "sxs-campaign"
    campaign_id, truth, hit_ids = careful_campaign("sxs", hits=3, name=name)  # both judge every item
    expected = _true_preferences(tmp_path, truth)

    with session_scope(requester_sessions) as session:
        sides = session.scalars(
            select(SlotArrangement).where(SlotArrangement.campaign_id == campaign_id)
        ).all()
        aggregated = aggregate_campaign(session, campaign_id)
        alpha = campaign_agreement(session, campaign_id)
    # Six assignments of four slots (three items, one gold) each, sides drawn per assignment.
    assert len(sides) == 6 * 4 and len({s.assignment_id for s in sides}) == 6
    assert len({s.arrangement["left"] for s in sides}) == 2
    assert {a.item_id: a.label for a in aggregated} == expected  # page answers unscrambled, gold excluded
    # Both votes at every median: full support, and the confidence two votes can give (issue 15, 16).
    assert all(a.method == "median_per_key" and a.votes == 2 for a in aggregated)
    assert all(a.detail["support"] == 1.0 for a in aggregated)
    assert all(a.confidence == majority_confidence(1.0, 2) < 0.9 for a in aggregated)
    assert alpha == 1.0

    # The marketplace holds what the workers chose (left/right); syncing it stores item terms again.
    page_terms = sync_marketplace_answers(mturk, market, requester_sessions, hit_ids)
    with session_scope(requester_sessions) as session:
        stored = {s.assignment_id: s for s in session.scalars(select(Submission))}
        left_of = {(s.assignment_id, s.position): s.arrangement["left"] for s in sides}
        payload_of = {
            (p.id, slot.position): slot.payload
            for p in session.scalars(select(PublishedHIT))
            for slot in p.slots
        }
        flipped = 0
        for assignment_id, fields in page_terms.items():
            submission = stored[assignment_id]
            assert submission.synced and submission.source == "page"
            for position, answer in enumerate(submission.answers["answers"]):
                first = payload_of[(submission.published_hit_id, position)]["candidates"][0]["id"]
                sign = 1 if left_of[(assignment_id, position)] == first else -1
                flipped += sign < 0
                assert answer == {m: sign * int(fields[f"sxs-{position}-{m}"]) for m in METRICS}
        aggregated_again = aggregate_campaign(session, campaign_id)
    assert flipped > 0
    assert {a.item_id: a.label for a in aggregated_again} == expected

    # The study's table: each column's share per system pair and metric, from the true preferences.
    result = hitforge_results(settings, "sxs", name, "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    system_of = {i: [c["system"] for c in item["candidates"]] for i, item in _items(tmp_path).items()}
    want: dict[tuple[str, str, str], Counter[int]] = {}
    for item_id, prefs in expected.items():
        x, y = sorted(system_of[item_id])
        for metric, value in prefs.items():
            oriented = value if system_of[item_id][1] == y else -value
            want.setdefault((x, y, metric), Counter())[oriented] += 2  # two workers
    assert {(r["x"], r["y"], r["metric"]) for r in rows} == set(want)
    names = {-2: "x_substantially", -1: "x_marginally", 0: "neutral", 1: "y_marginally", 2: "y_substantially"}
    for r in rows:
        counts = want[(r["x"], r["y"], r["metric"])]
        n = sum(counts.values())
        assert int(r["judgements"]) == n
        for value, column in names.items():
            assert float(r[column]) == round(counts[value] / n, 4)
            assert float(r[f"{column}_low"]) <= float(r[column]) <= float(r[f"{column}_high"])
        net = (counts[1] + counts[2] - counts[-1] - counts[-2]) / n
        assert float(r["net_y"]) == round(net, 4)
    table = hitforge_results(settings, "sxs", name).output
    first_pair = sorted({tuple(sorted(s)) for s in system_of.values()})[0]
    assert f"{first_pair[0]} vs {first_pair[1]}:" in table
    header = next(line for line in table.splitlines() if line.startswith("metric"))
    assert re.search(
        rf"{first_pair[0]} \+\+ +{first_pair[0]} \+ +neutral +{first_pair[1]} \+ +{first_pair[1]} \+\+",
        header,
    )
    for label, _ in METRICS.values():
        assert label in table
    other = hitforge_results(settings, "sxs", "no-such-campaign")
    assert other.exit_code != 0 and "no campaign named" in other.output


def test_no_page_script_url_or_response_a_worker_gets_tells_sides_or_systems(
    tmp_path, live_server, market, requester_sessions
) -> None:
    _, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "sxs", hits=2, name="sxs-blind"
    )
    items = _items(tmp_path)
    gold = [json.loads(line)["item"] for line in (tmp_path / "gold.jsonl").read_text().splitlines()]
    ids = {c["id"] for item in [*items.values(), *gold] for c in item["candidates"]}
    # Candidate ids as whole words (a CSS colour may contain "c1"), systems anywhere, and the
    # names the server keeps sides under. ("left" is on every page: the instructions use it.)
    secret = re.compile(rf"(?<![\w#])({'|'.join(re.escape(i) for i in ids)}|arrangement|gold)(?![\w])", re.I)
    # A picture whose file names a system (PNG text, EXIF) is served as pixels only.
    for item in [*items.values(), *gold]:
        name_a_model_in(tmp_path / "media" / item["image"], item["candidates"][0]["system"])

    gotten: list[tuple[str, str]] = []  # (what, text) of everything the worker's browser receives
    pages = []
    for n in range(4):  # four workers: both assignments of each HIT
        worker, params = accept_framed(live_server.url, hit_ids[n // 2], f"blind-{n}")
        page = worker.http.get(live_server.url + "/tasks/hit", params=params, timeout=30)
        again = worker.http.get(live_server.url + "/tasks/hit", params=params, timeout=30)
        assert page.status_code == 200
        html = BeautifulSoup(page.text, "html.parser")
        pages.append(html)
        gotten += [("page URL", page.url), ("page", page.text), ("headers", json.dumps(dict(page.headers)))]
        # The same assignment sees the same sides when the page is shown again.
        assert [p.get_text() for p in html.select("p.candidate-text")] == [
            p.get_text() for p in BeautifulSoup(again.text, "html.parser").select("p.candidate-text")
        ]
        for tag, attr in (("img", "src"), ("script", "src"), ("link", "href")):
            for element in html.find_all(tag):
                if isinstance(element, Tag) and element.get(attr):
                    url = urljoin(page.url, str(element[attr]))
                    fetched = worker.http.get(url, timeout=30)
                    gotten += [(f"{tag} URL", url), (f"{tag} body", fetched.content.decode("latin-1"))]
                    if tag == "img":
                        pixels_only(fetched.content, SYSTEMS)
        for script in html.find_all("script"):
            gotten.append(("inline script", script.get_text()))
        # A submit with one metric missing (error page), then a complete one (the hand-off page).
        form = html.find("form", id="task-form")
        assert isinstance(form, Tag)
        data = hidden_fields(form)
        slots = len(html.select("fieldset.sxs-item"))
        answers = {f"sxs-{s}-{m}": str((s + k) % 5 - 2) for s in range(slots) for k, m in enumerate(METRICS)}
        partial = {k: v for k, v in answers.items() if k != "sxs-0-tldr"}
        refused = worker.http.post(live_server.url + "/tasks/submit", data={**data, **partial}, timeout=30)
        assert (
            refused.status_code == 422
            and "Picture 1: choose for First sentences as a summary" in refused.text
        )
        handoff = worker.http.post(live_server.url + "/tasks/submit", data={**data, **answers}, timeout=30)
        assert handoff.status_code == 200, handoff.text[:500]
        relayed = {
            str(i["name"]): str(i.get("value", ""))
            for i in BeautifulSoup(handoff.text, "html.parser").find_all("input")
            if isinstance(i, Tag) and str(i.get("name", "")).startswith("sxs-")
        }
        assert relayed == answers  # the marketplace gets what the worker chose, in page terms only
        gotten += [("error page", refused.text), ("hand-off", handoff.text)]
        assert csrf_of(page)

    for what, text in gotten:
        found = secret.search(text)
        assert found is None, f"{found.group(0)!r} in the {what}"
        assert not names_in(text, SYSTEMS), f"{names_in(text, SYSTEMS)} in the {what}"
    # Form fields name pictures and metrics only; nothing on the page differs by side but the texts.
    for html in pages:
        names = {str(i["name"]) for i in html.select("fieldset.sxs-item input")}
        assert all(re.fullmatch(rf"sxs-\d+-({'|'.join(METRICS)})", n) for n in names)
        values = {str(i["value"]) for i in html.select("fieldset.sxs-item input")}
        assert values == {"-2", "-1", "0", "1", "2"}

    def shape(html: BeautifulSoup) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
        return [
            (t.name, tuple(sorted((k, str(v)) for k, v in t.attrs.items() if k not in ("value",))))
            for t in html.select("fieldset.sxs-item *")
        ]

    # Apart from the texts' order (and the opaque picture URLs, per assignment), all pages are alike.
    strip = [re.sub(r"/tasks/media/[^\"']+", "", str(shape(h))) for h in pages]
    assert len(set(strip)) == 1


def _launch_without_gold(folder, market, requester_sessions, public_url: str, name: str) -> str:  # type: ignore[no-untyped-def]
    """An sxs campaign of one HIT and no gold (whose first opening would serialize the page); its HIT id."""
    task = get_demo_task("sxs")
    task.write_data(folder, task.items_per_hit, 0, 5)
    spec = {
        "name": name,
        "template": "sxs",
        "title": f"{task.title} {name}",
        "description": task.description,
        "reward": "0.10",
        "budget": "10.00",
        "assignments_per_hit": 1,
        "gold_per_hit": 0,
        "items_per_hit": task.items_per_hit,
        "items": "items.jsonl",
        "media_dir": "media",
    }
    campaign_id = publish_campaign_file(folder, spec, market, requester_sessions, public_url)
    with session_scope(requester_sessions) as session:
        return str(
            session.scalar(select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id))
        )


def test_a_page_opened_many_times_at_once_records_one_arrangement_and_shows_it_everywhere(
    tmp_path, settings, live_server, market, requester_sessions
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import requests

    hit_id = _launch_without_gold(tmp_path, market, requester_sessions, live_server.url, "sxs-race")
    _, params = accept_framed(live_server.url, hit_id, "racer")
    start = threading.Barrier(8)

    def texts(_: int) -> tuple[int, tuple[str, ...]]:
        start.wait()
        page = requests.get(live_server.url + "/tasks/hit", params=params, timeout=60)
        html = BeautifulSoup(page.text, "html.parser")
        return page.status_code, tuple(p.get_text() for p in html.select("p.candidate-text"))

    with ThreadPoolExecutor(max_workers=8) as pool:
        seen = list(pool.map(texts, range(8)))
    assert {status for status, _ in seen} == {200}
    assert len({order for _, order in seen}) == 1  # every opening shows the same sides
    with session_scope(requester_sessions) as session:
        rows = session.scalars(
            select(SlotArrangement).where(SlotArrangement.assignment_id == params["assignmentId"])
        ).all()
    assert sorted(r.position for r in rows) == list(range(len(seen[0][1]) // 2))
    # Pages opened, nothing answered yet: the table says so instead of printing an empty one.
    empty = hitforge_results(settings, "sxs", "sxs-race")
    assert (
        empty.exit_code == 1 and "no judgements between candidates of different systems yet" in empty.output
    )
