"""A rank campaign over HTTP: per-assignment order unscrambled on the server, pictures, blinding, table."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag
from PIL import Image
from sqlalchemy import select

from demo.tasks import truth_key
from demo.tasks.rank import SYSTEMS, true_ranks
from hits.db import session_scope
from hits.requester.quality.aggregation import aggregate_campaign, campaign_agreement
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.tables.templates import SlotArrangement
from tests.helpers import (
    hidden_fields,
    hitforge_results,
    launch_template_campaign,
    name_a_model_in,
    names_in,
    opaque_part,
    pixel_digest,
    pixels_only,
    sync_marketplace_answers,
)
from tests.server.worker_helpers import WorkerClient, accept_framed, csrf_of, soup


def _rows(folder, name: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return [json.loads(line) for line in (folder / name).read_text().splitlines()]


def _true_ranks(folder, truth) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
    """Each item's true ranking in item terms (candidate id -> rank, ties shared)."""
    out = {}
    for row in _rows(folder, "items.jsonl"):
        item = row["item"]
        diffs = truth[truth_key(item["image"], [c["image"] for c in item["candidates"]])]
        out[row["id"]] = true_ranks({c["id"]: diffs[c["image"]] for c in item["candidates"]})
    return out


def test_careful_workers_rankings_survive_random_order_and_make_the_table(
    tmp_path, settings, market, mturk, requester_sessions, careful_campaign
) -> None:
    name = "rank-campaign"
    campaign_id, truth, hit_ids = careful_campaign("rank", hits=3, name=name)  # both rank every item
    expected = _true_ranks(tmp_path, truth)
    assert any(len(set(r.values())) < len(r) for r in expected.values())  # the truth holds ties

    with session_scope(requester_sessions) as session:
        orders = session.scalars(
            select(SlotArrangement).where(SlotArrangement.campaign_id == campaign_id)
        ).all()
        aggregated = aggregate_campaign(session, campaign_id)
        alpha = campaign_agreement(session, campaign_id)
    # Six assignments of five slots (three items, two gold) each, an order drawn per assignment.
    assert len(orders) == 6 * 5 and len({o.assignment_id for o in orders}) == 6
    assert len({tuple(o.arrangement["order"]) for o in orders}) > 1
    # Page answers unscrambled, ties kept through the model's consensus, gold left out.
    assert {a.item_id: a.label for a in aggregated} == expected
    assert all(a.method == "davidson" and a.votes == 2 and a.detail["support"] == 1.0 for a in aggregated)
    assert alpha == 1.0

    # The marketplace holds ranks by page place; syncing its copy stores item terms again.
    page_terms = sync_marketplace_answers(mturk, market, requester_sessions, hit_ids)
    assert all(re.fullmatch(r"rank-\d+-\d+", f) for fields in page_terms.values() for f in fields)
    with session_scope(requester_sessions) as session:
        # This campaign's submissions only: the database is shared with the session's other tests.
        stored = {
            s.assignment_id: s
            for s in session.scalars(select(Submission).where(Submission.assignment_id.in_(page_terms)))
        }
        order_of = {(o.assignment_id, o.position): o.arrangement["order"] for o in orders}
        moved = 0
        for assignment_id, fields in page_terms.items():
            submission = stored[assignment_id]
            assert submission.synced and submission.source == "page"
            for position, answer in enumerate(submission.answers["answers"]):
                shown = order_of[(assignment_id, position)]
                moved += shown != sorted(shown)
                assert answer == {c: int(fields[f"rank-{position}-{k}"]) for k, c in enumerate(shown)}
        aggregated_again = aggregate_campaign(session, campaign_id)
        # Careful workers pass every gold item (tau-b 1 against keys with and without ties).
        assert all(s.gold_total == 2 and s.gold_correct == 2 for s in stored.values())
    assert moved > 0
    assert {a.item_id: a.label for a in aggregated_again} == expected

    # The study's table from the true rankings: mean rank and shared first places per system and condition.
    result = hitforge_results(settings, "rank", name, "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    ranks_by: dict[tuple[str, str], list[int]] = defaultdict(list)
    firsts: dict[tuple[str, str], float] = defaultdict(float)
    for row in _rows(tmp_path, "items.jsonl"):
        item, ranks = row["item"], expected[row["id"]]
        at_first = sum(r == 1 for r in ranks.values())
        for c in item["candidates"]:
            for column in (item["condition"], "all"):
                ranks_by[(c["system"], column)] += [ranks[c["id"]]] * 2  # two workers
                firsts[(c["system"], column)] += 2 * (ranks[c["id"]] == 1) / at_first
    assert {(r["system"], r["condition"]) for r in rows} == set(ranks_by)
    for r in rows:
        given = ranks_by[(r["system"], r["condition"])]
        assert int(r["rankings"]) == len(given)
        assert float(r["mean_rank"]) == round(sum(given) / len(given), 4)
        assert float(r["first_share"]) == round(firsts[(r["system"], r["condition"])] / len(given), 4)
        assert float(r["mean_rank_low"]) <= float(r["mean_rank"]) <= float(r["mean_rank_high"])
    table = hitforge_results(settings, "rank", name).output
    assert "Mean rank" in table and "First places" in table and "Davidson" in table
    header = next(line for line in table.splitlines() if line.startswith("system"))
    assert header.split()[-1] == "all" and "sentence 1" in header
    other = hitforge_results(settings, "rank", "no-such-campaign")
    assert other.exit_code != 0 and "no campaign named" in other.output
    for table_of in ("sxs", "heatmap"):  # another study's table of this campaign is refused, by name
        wrong = hitforge_results(settings, table_of, name)
        assert wrong.exit_code != 0 and f"uses the rank template, not {table_of}" in wrong.output


def test_no_page_picture_url_or_response_a_worker_gets_tells_candidates_systems_or_order(
    tmp_path, live_server, market, requester_sessions
) -> None:
    _, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rank", hits=2, name="rank-blind"
    )
    items = [r["item"] for r in _rows(tmp_path, "items.jsonl") + _rows(tmp_path, "gold.jsonl")]
    ids = {c["id"] for item in items for c in item["candidates"]}
    files = {c["image"] for item in items for c in item["candidates"]} | {item["image"] for item in items}
    conditions = {item["condition"] for item in items}
    # Each candidate's file names its system as a text-to-image model's output does (PNG text, EXIF)
    # and has its system's own size; the reference names one too. A blinded page serves pixels only,
    # every candidate at one size.
    own_size = {"keen": (320, 240), "steady": (320, 180), "hasty": (240, 240)}
    assert set(own_size) == set(SYSTEMS)
    for item in items:
        name_a_model_in(tmp_path / "media" / item["image"], "keen")
        for c in item["candidates"]:
            name_a_model_in(tmp_path / "media" / c["image"], c["system"], own_size[c["system"]])
    # Candidate ids as whole words (a CSS colour may contain "c1"), file names, conditions, systems,
    # and the names the server keeps orders under.
    words = [*ids, *(f.rsplit(".", 1)[0] for f in files), *conditions, "arrangement", "gold"]
    secret = re.compile(rf"(?<![\w#])({'|'.join(re.escape(w) for w in words)})(?![\w])", re.I)
    content = {pixel_digest(tmp_path / "media" / f): f for f in files}

    gotten: list[tuple[str, str]] = []  # (what, text) of everything the worker's browser receives
    pages = []
    candidate_sizes = set()
    for n in range(4):  # four workers: both assignments of each HIT
        worker, params = accept_framed(live_server.url, hit_ids[n // 2], f"blind-{n}")
        page = worker.http.get(live_server.url + "/tasks/hit", params=params, timeout=30)
        again = worker.http.get(live_server.url + "/tasks/hit", params=params, timeout=30)
        assert page.status_code == 200
        html = BeautifulSoup(page.text, "html.parser")
        pages.append(html)
        gotten += [("page URL", page.url), ("page", page.text), ("headers", json.dumps(dict(page.headers)))]
        # The same assignment sees the same order when the page is shown again.
        assert [i["src"] for i in html.select("section.candidate img")] == [
            i["src"] for i in BeautifulSoup(again.text, "html.parser").select("section.candidate img")
        ]
        for tag, attr in (("img", "src"), ("script", "src"), ("link", "href")):
            for element in html.find_all(tag):
                if isinstance(element, Tag) and element.get(attr):
                    url = urljoin(page.url, str(element[attr]))
                    fetched = worker.http.get(url, timeout=30)
                    assert fetched.status_code == 200, url
                    if tag == "img":  # every picture is one of the campaign's, by what it shows...
                        # ...re-encoded: no text chunk, no EXIF, nothing naming a system...
                        size, digest = pixels_only(fetched.content, SYSTEMS)
                        if element.find_parent("section", class_="candidate"):
                            # ...a candidate's padded to the size all candidates share.
                            size, digest = opaque_part(fetched.content)
                            candidate_sizes.add(size)
                        assert digest in content
                        # ...and its headers do not name its file (a requester's "model-a.png").
                        gotten.append(("picture headers", json.dumps(dict(fetched.headers))))
                        # Nor its file's date or path hash (gold pictures may be added later).
                        assert not {"Last-Modified", "ETag"} & set(fetched.headers), fetched.headers
                    else:
                        gotten.append((f"{tag} body", fetched.text))
                    gotten.append((f"{tag} URL", url))
        for script in html.find_all("script"):
            gotten.append(("inline script", script.get_text()))
        form = html.find("form", id="task-form")
        assert isinstance(form, Tag)
        data = hidden_fields(form)
        selects = [str(s["name"]) for s in html.select("fieldset.rank-item select")]
        # 1, 2, 1 in every task: the first and last candidates tied.
        answers = {field: "2" if field.endswith("-1") else "1" for field in selects}
        partial = {**answers, selects[-1]: ""}  # as a browser sends a select left at "Choose a rank"
        refused = worker.http.post(live_server.url + "/tasks/submit", data={**data, **partial}, timeout=30)
        assert refused.status_code == 422 and "1 of 3 candidates has no rank yet" in refused.text
        handoff = worker.http.post(live_server.url + "/tasks/submit", data={**data, **answers}, timeout=30)
        assert handoff.status_code == 200, handoff.text[:500]
        relayed = {
            str(i["name"]): str(i.get("value", ""))
            for i in BeautifulSoup(handoff.text, "html.parser").find_all("input")
            if isinstance(i, Tag) and str(i.get("name", "")).startswith("rank-")
        }
        # The marketplace gets ranks by page place only, normalised (1,2,1 -> 1,3,1).
        assert set(relayed) == set(answers) and set(relayed.values()) <= {"1", "3"}
        gotten += [("error page", refused.text), ("hand-off", handoff.text)]
        assert csrf_of(page)
        # A picture URL with a forged tag, or another assignment's, is nothing.
        src = str(html.select("section.candidate img")[0]["src"])
        forged = re.sub(r"/([^/?]+)\?", "/AAAAAAAAAAAAAAAAAAAAAAAA?", src)
        assert worker.http.get(urljoin(page.url, forged), timeout=30).status_code == 404
        assert worker.http.get(urljoin(page.url, src.split("?")[0]), timeout=30).status_code == 404

    # Whatever size a system's pictures have, every candidate picture served has one size.
    assert len(candidate_sizes) == 1, candidate_sizes
    for what, text in gotten:
        found = secret.search(text)
        assert found is None, f"{found.group(0)!r} in the {what}"
        assert not names_in(text, SYSTEMS), f"{names_in(text, SYSTEMS)} in the {what}"
    # Form fields name tasks and page places only; all pages are alike but for the pictures' URLs.
    for html in pages:
        names = {str(s["name"]) for s in html.select("fieldset.rank-item select")}
        assert all(re.fullmatch(r"rank-\d+-[0-2]", n) for n in names)

    def shape(html: BeautifulSoup) -> str:
        return str(
            [
                (t.name, sorted((k, str(v)) for k, v in t.attrs.items() if k != "src"))
                for t in html.select("fieldset *")
            ]
        )

    assert len({shape(h) for h in pages}) == 1
    # Within a page too, candidate pictures differ only by opaque URL and page letter (alt): no width,
    # height or name of a system's own.
    for html in pages:
        imgs = html.select("section.candidate img")
        attrs = {str(sorted((k, v) for k, v in i.attrs.items() if k not in ("src", "alt"))) for i in imgs}
        assert len(imgs) >= 2 and len(attrs) == 1, attrs


def _worked_page(url: str, requester_sessions, campaign_id: int, hit_id: str, worker_id: str):  # type: ignore[no-untyped-def]
    """A worker's page of the HIT: (worker, response, soup, slot payloads and candidate order by position)."""
    worker, params = accept_framed(url, hit_id, worker_id)
    page = worker.http.get(url + "/tasks/hit", params=params, timeout=30)
    with session_scope(requester_sessions) as session:
        published = session.scalar(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id))
        assert published is not None
        payloads = {slot.position: slot.payload for slot in published.slots}
        order = {
            a.position: a.arrangement["order"]
            for a in session.scalars(
                select(SlotArrangement).where(SlotArrangement.assignment_id == params["assignmentId"])
            )
        }
    return worker, page, BeautifulSoup(page.text, "html.parser"), payloads, order


def test_candidate_pictures_are_served_in_each_assignments_order(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rank", hits=1, name="rank-pictures"
    )
    worker, page, html, payloads, order = _worked_page(
        live_server.url, requester_sessions, campaign_id, hit_ids[0], "looker"
    )
    checked = 0
    for position, fieldset in enumerate(html.select("fieldset.rank-item")):
        if payloads[position].get("candidates") is None:
            continue  # a gold slot: its payload is the gold item's, checked by the blinding test
        image_of = {c["id"]: c["image"] for c in payloads[position]["candidates"]}
        for img, candidate in zip(fieldset.select("section.candidate img"), order[position], strict=True):
            got = worker.http.get(urljoin(page.url, str(img["src"])), timeout=30)
            assert pixel_digest(got.content) == pixel_digest(tmp_path / "media" / image_of[candidate])
            checked += 1
    assert checked >= 3 * 3  # the three ordinary items' candidates at least


def test_a_preview_shows_every_picture_in_a_fresh_order_and_records_none(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rank", hits=1, name="rank-preview"
    )
    viewer = WorkerClient(live_server.url, "viewer")
    frame = soup(viewer.get(f"/hits/{hit_ids[0]}")).find("iframe", id="hit-frame")
    assert isinstance(frame, Tag)
    files = {pixel_digest(p): p.name for p in (tmp_path / "media").iterdir() if p.is_file()}
    seen = set()
    for _ in range(6):
        page = viewer.http.get(urljoin(live_server.url, str(frame["src"])), timeout=30)
        assert page.status_code == 200
        html = BeautifulSoup(page.text, "html.parser")
        assert html.select("fieldset.rank-item select") and all(
            s.has_attr("disabled") for s in html.select("fieldset.rank-item select")
        )
        names = []
        for img in html.select("fieldset.rank-item section.candidate img"):
            got = viewer.http.get(urljoin(page.url, str(img["src"])), timeout=30)
            assert got.status_code == 200
            names.append(files[pixel_digest(got.content)])
        seen.add(tuple(names))
    assert len(seen) > 1  # a fresh order each time (six previews alike by chance: 1 in 6**(5*5))
    with session_scope(requester_sessions) as session:
        recorded = session.scalars(
            select(SlotArrangement).where(SlotArrangement.campaign_id == campaign_id)
        ).all()
    assert recorded == []


def _model_output(path, system: str) -> None:  # type: ignore[no-untyped-def]
    """Overwrite ``path`` with a picture of ``system``'s own kind (see the test below)."""
    exif = Image.Exif()
    if system == "keen":  # wider than a canvas may be
        picture = Image.new("RGB", (4096, 256), (200, 30, 30))
    elif system == "steady":  # stored 300x200, shown turned a quarter (EXIF orientation 6): 200x300
        picture = Image.new("RGB", (300, 200), (30, 200, 30))
        exif[0x0112] = 6
    else:  # small
        picture = Image.new("RGB", (64, 64), (30, 30, 200))
    picture.save(path, format="PNG", exif=exif)


def test_candidate_pictures_share_one_canvas_whatever_their_size_or_orientation(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rank", hits=1, name="rank-canvas"
    )
    items = [r["item"] for r in _rows(tmp_path, "items.jsonl")]
    drawn_by = {}  # file -> the system whose picture it now holds (items may share a drawing)
    for item in items + [r["item"] for r in _rows(tmp_path, "gold.jsonl")]:
        for c in item["candidates"]:
            _model_output(tmp_path / "media" / c["image"], c["system"])
            drawn_by[c["image"]] = c["system"]
    worker, page, html, payloads, order = _worked_page(
        live_server.url, requester_sessions, campaign_id, hit_ids[0], "measurer"
    )
    # The smallest box holding 4096x256, 200x300 and 64x64 is 4096x300: halved to 2048 pixels wide.
    # In it each picture is scaled to fit, its shape kept (the turned one taller than wide).
    expected = {"keen": (2048, 128), "steady": (100, 150), "hasty": (150, 150)}
    checked = 0
    for position, fieldset in enumerate(html.select("fieldset.rank-item")):
        candidates = payloads[position].get("candidates") or []
        # An ordinary item (a gold slot shows the gold item this worker was given) whose files still
        # hold its own systems' pictures, three of them.
        known = candidates in [i["candidates"] for i in items] and all(
            drawn_by[c["image"]] == c["system"] for c in candidates
        )
        system_of = {c["id"]: c["system"] for c in candidates}
        sizes = set()
        for img, candidate in zip(fieldset.select("section.candidate img"), order[position], strict=True):
            got = worker.http.get(urljoin(page.url, str(img["src"])), timeout=30)
            with Image.open(io.BytesIO(got.content)) as served:
                sizes.add(served.size)
                box = served.getchannel("A").getbbox()
            if known:
                assert served.size == (2048, 150)
                assert (
                    box is not None and (box[2] - box[0], box[3] - box[1]) == expected[system_of[candidate]]
                )
                checked += 1
        assert len(sizes) == 1 and max(max(sizes)) <= 2048, sizes
    assert checked >= 2 * 3  # two ordinary items' candidates at least
