"""A copying pair through the review pipeline, the real Celery worker and the QA dashboard.

The pair: a sloppy worker (right half the time), and a second account that gives, on every HIT,
the answers the first gave (it reads them off a shared sheet, as one person
with two accounts or two friends would). A diligent worker does the same HITs
honestly.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag
from sqlalchemy import select

from demo.crowd import PROFILES, Bot, Profile
from demo.tasks import image_name, slots_of
from demo.tasks.rating import QUOTES, fill
from hits.db import session_scope
from hits.requester.tables.campaigns import OutboxEntry, PublishedHIT, Submission, WorkerStats
from hits.requester.tables.quality import CopyingPair
from tests.helpers import launch_demo_campaign
from tests.quality.test_followups import review
from tests.server.test_dashboard import staff_session
from tests.workers.test_review_pipeline import wait_for, worker_env

#: Copying counts from 10 shared items at a false-alarm bound of 0.01 here, so that a pair
#: shows up within a few HITs of two real items each (the defaults are 20 and 1e-6). The
#: threshold of 0.3 lets gold pass a worker right half the time: only copying tells.
QUALITY = {
    "accuracy_threshold": 0.3,
    "confidence": 0.9,
    "min_gold": 3,
    "copying_min_shared": 10,
    "copying_false_alarm": 0.01,
}


#: The source's accuracy: right half the time, a near miss otherwise.
SLOPPY = Profile("sloppy", 0.5)


def _keys(form: Tag) -> list[str]:
    """The rating demo's item keys on a page, in slot order (as ``fill`` reads them)."""
    keys = []
    for pair in slots_of(form, "pair"):
        img, sentence = pair.find("img"), pair.find("p", class_="sentence")
        assert isinstance(img, Tag) and isinstance(sentence, Tag)
        keys.append(f"{image_name(img)}|{sentence.get_text().strip().strip(QUOTES)}")
    return keys


def copying_pair(url: str, name: str, truth: dict[str, Any]) -> tuple[Bot, Bot]:
    """A sloppy worker who writes its answers on a sheet, and a second account answering from it."""
    # One list of answers per (picture, sentence): two items of a campaign can show the same
    # drawing and sentence, and the copier, working the same HITs in the same order after the
    # source, must copy each its own answer, not the last one written under that key.
    sheet: dict[str, list[int]] = defaultdict(list)

    def source_fill(form: Tag, truth: Any, profile: Profile, rng: random.Random) -> dict[str, str]:
        data = fill(form, truth, profile, rng)
        for index, key in enumerate(_keys(form)):
            sheet[key].append(int(data[f"rating-{index}"]))
        return data

    def copier_fill(form: Tag, truth: Any, profile: Profile, rng: random.Random) -> dict[str, str]:
        page = {key: sheet[key].pop(0) for key in _keys(form)}
        return fill(form, page, Profile("copier", 1.0), rng)  # the sheet's answer, every time

    bots = []
    for role, answer in (("source", source_fill), ("copier", copier_fill)):
        bot = Bot(url, f"{name}-{role}", SLOPPY, truth, fill_form=answer)
        bot.title_filter = f"Rate drawings {name}"
        bots.append(bot)
    return bots[0], bots[1]


def _honest(url: str, name: str, truth: dict[str, Any]) -> Bot:
    bot = Bot(url, f"{name}-honest", PROFILES["diligent"], truth)
    bot.title_filter = f"Rate drawings {name}"
    return bot


def _launch_and_work(  # type: ignore[no-untyped-def]
    folder, url: str, market, sessions, name: str, *, hits: int, each: int
) -> tuple[int, tuple[Bot, Bot, Bot]]:
    """A rating campaign of ``hits`` HITs of three assignments; the pair and an honest worker do ``each``."""
    campaign_id, truth = launch_demo_campaign(
        folder,
        market,
        sessions,
        url,
        hits=hits,
        name=name,
        quality=QUALITY,
        assignments_per_hit=3,
        # Pinned: where gold lands decides the sloppy pair's luck on 8 gold items. Left to the
        # campaign's id (which depends on the tests run before), one order of the suite dealt
        # them 7 right of 8: an honest pair that good agrees often enough that 16 identical
        # answers fall short of the 0.01 bound (p = 0.016), and gold rightly approved them.
        seed=3,
    )
    bots = (*copying_pair(url, name, truth), _honest(url, name, truth))
    for bot in bots:
        assert bot.run(max_hits=each).submitted == each, bot.result.errors
    return campaign_id, bots


def _decisions(sessions, campaign_id: int, worker_id: str) -> list[str | None]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        return list(
            session.scalars(
                select(Submission.decision)
                .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
                .where(PublishedHIT.campaign_id == campaign_id, Submission.worker_id == worker_id)
                .order_by(Submission.id)
            )
        )


def _stats(sessions, campaign_id: int, worker_id: str) -> tuple[bool, str]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        stats = session.get(WorkerStats, (campaign_id, worker_id))
        return (bool(stats and stats.flagged), (stats.flag_reason or "") if stats else "")


def test_a_copying_pair_is_flagged_both_held_and_the_reason_restated_as_evidence_grows(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    campaign_id, (source, copier, honest) = _launch_and_work(
        tmp_path, live_server.url, market, requester_sessions, "copy-grow", hits=10, each=6
    )
    review(requester_sessions, market)
    pair = sorted((source.result.worker_id, copier.result.worker_id))
    for worker in pair:
        flagged, reason = _stats(requester_sessions, campaign_id, worker)
        assert flagged and reason.startswith("suspicious signals: copying with "), reason
        assert "12/12 identical answers" in reason, reason
        # Held for a person: nothing of theirs rejected (nor approved) on the signal.
        assert set(_decisions(requester_sessions, campaign_id, worker)) == {"held"}
    assert not _stats(requester_sessions, campaign_id, honest.result.worker_id)[0]
    assert mturk.list_worker_blocks()["WorkerBlocks"] == []

    # Four more HITs each: the kept evidence and the flag reason say 20 of 20 now.
    for bot in (source, copier, honest):
        assert bot.run(max_hits=10).submitted == 10, bot.result.errors
    review(requester_sessions, market)
    for worker in pair:
        flagged, reason = _stats(requester_sessions, campaign_id, worker)
        assert flagged and "20/20 identical answers" in reason, reason
        assert set(_decisions(requester_sessions, campaign_id, worker)) == {"held"}
    with session_scope(requester_sessions) as session:
        kept = session.scalars(
            select(CopyingPair)
            .where(CopyingPair.campaign_id == campaign_id)
            .order_by(CopyingPair.flagged.desc(), CopyingPair.first_worker)
        ).all()
        # Every pair of the same HITs is counted; only the copying one was ever suspicious.
        assert [(p.first_worker, p.second_worker, p.shared_items, p.identical_answers) for p in kept[:1]] == [
            (pair[0], pair[1], 20, 20)
        ]
        assert len(kept) == 3 and [p.flagged for p in kept] == [True, False, False]
        assert [p.shared_hits for p in kept] == [10, 10, 10]
        assert kept[0].suspicious and kept[0].evidence["answered_first"][source.result.worker_id] == 10
        assert kept[0].first_ahead + kept[0].second_ahead == 10
    assert not _stats(requester_sessions, campaign_id, honest.result.worker_id)[0]


def _form(page: BeautifulSoup, action_part: str) -> dict[str, str]:
    form = next(f for f in page.find_all("form") if action_part in str(f.get("action", "")))
    token = form.find("input", attrs={"name": "csrf_token"})
    assert isinstance(token, Tag)
    return {"csrf_token": str(token["value"]), "_action": str(form["action"])}


@pytest.mark.celery
def test_celery_flags_a_copying_pair_and_the_dashboard_shows_the_evidence_and_confirms(
    tmp_path, settings, live_server, requester, market, mturk, requester_sessions
) -> None:
    from demo.runner import spawn_worker, stop_process

    campaign_id, (source, copier, honest) = _launch_and_work(
        tmp_path, live_server.url, market, requester_sessions, "copy-celery", hits=8, each=8
    )
    workers = {b.result.worker_id for b in (source, copier)}
    process = spawn_worker(worker_env(settings, requester), tmp_path / "celery.log")
    try:
        flagged: Callable[[], bool] = lambda: all(  # noqa: E731
            _stats(requester_sessions, campaign_id, w)[0]
            and set(_decisions(requester_sessions, campaign_id, w)) == {"held"}
            for w in workers
        )
        wait_for(flagged)
        http = staff_session(live_server.url, requester_sessions)
        home = BeautifulSoup(http.get(f"{live_server.url}/dashboard/").text, "html.parser")
        rows = home.find("table", id="flagged")
        assert isinstance(rows, Tag)
        listed = {  # this campaign's flagged workers (an admin sees every campaign's)
            r.find("a").get_text(): r.get_text(" ", strip=True)
            for r in rows.find_all("tr")[1:]
            if f"/workers/{campaign_id}/" in r.find("a")["href"]
        }
        assert set(listed) == workers, listed  # the honest worker is not flagged
        assert all("copying with" in text for text in listed.values())
        page_url = f"{live_server.url}/dashboard/workers/{campaign_id}/{copier.result.worker_id}"
        page = BeautifulSoup(http.get(page_url).text, "html.parser")
        section = page.find("section", class_="copying-pair")
        assert isinstance(section, Tag) and section["data-partner"] == source.result.worker_id
        shown = section.get_text(" ", strip=True)
        assert "16 of 16 shared items" in shown, shown
        assert "Agreement observed 100%" in shown and "Agreement expected (at most, honest pair)" in shown
        assert f"{source.result.worker_id} on 8 HITs; {copier.result.worker_id} on 0 HITs" in shown or (
            f"{copier.result.worker_id} on 0 HITs; {source.result.worker_id} on 8 HITs" in shown
        ), shown
        times = section.find("table", class_="copying-times")
        assert isinstance(times, Tag) and len(times.find_all("tr")) == 9  # a header and 8 HITs
        # The reviewer confirms the copier's flag: its held work is rejected through the API.
        form = _form(page, "/review")
        response = http.post(
            live_server.url + form.pop("_action"), data={**form, "action": "confirm", "note": "copies"}
        )
        assert response.status_code == 200

        def rejected() -> bool:
            with session_scope(requester_sessions) as session:
                done = session.scalars(
                    select(OutboxEntry).where(
                        OutboxEntry.campaign_id == campaign_id, OutboxEntry.action == "reject"
                    )
                ).all()
                return len(done) == 8 and all(e.status == "done" for e in done)

        wait_for(rejected)
    finally:
        stop_process(process)
    log = (tmp_path / "celery.log").read_text()
    assert "Traceback" not in log, log[-3000:]
    assert set(_decisions(requester_sessions, campaign_id, copier.result.worker_id)) == {"reject"}
    with session_scope(requester_sessions) as session:
        assignments = session.scalars(
            select(Submission.assignment_id).where(Submission.worker_id == copier.result.worker_id)
        ).all()
    statuses = {mturk.get_assignment(AssignmentId=a)["Assignment"]["AssignmentStatus"] for a in assignments}
    assert statuses == {"Rejected"}
    # The source's work still waits for a reviewer: confirming one account decides only its own.
    assert set(_decisions(requester_sessions, campaign_id, source.result.worker_id)) == {"held"}
