"""QA review from the outside: the queue, an assignment's evidence, honest flag actions, names in the log."""

from __future__ import annotations

import uuid
from decimal import Decimal

import requests
from bs4 import BeautifulSoup
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.campaigns.staff import assign_campaign
from hits.requester.quality.review_queue import review_queue
from hits.requester.tables.campaigns import (
    Campaign,
    GoldItem,
    HITSlot,
    Item,
    OutboxEntry,
    PublishedHIT,
    ReviewAction,
    StaffUser,
    Submission,
    WorkerStats,
)
from hits.requester.tables.quality import SpotCheck
from tests.server.test_dashboard import staff_session


def _worker() -> str:
    return "A" + uuid.uuid4().hex[:13].upper()


def seed(  # type: ignore[no-untyped-def]
    requester_sessions,
    *,
    reward: str = "0.50",
    held: int = 1,
    gold: tuple[int, int] = (1, 4),
    flagged: bool = True,
    template: str = "rating",
    decision: str = "held",
    threshold: float = 0.6,
    item_payload: dict | None = None,
    gold_payload: dict | None = None,
    gold_answer: object = None,
    answers: list | None = None,
) -> tuple[int, str, str, list[str]]:
    """A campaign with one worker's work: (campaign id, name, worker id, assignment ids)."""
    worker_id = _worker()
    name = f"review-{worker_id[-6:].lower()}"
    with session_scope(requester_sessions) as session:
        campaign = Campaign(
            name=name,
            template=template,
            spec={"reward": reward, "quality": {"accuracy_threshold": threshold}},
            budget=Decimal("10"),
        )
        session.add(campaign)
        session.flush()
        item = Item(
            campaign_id=campaign.id,
            position=0,
            external_id="i1",
            payload=item_payload or {"image": "scene.png", "sentence": "A red circle above a blue square."},
        )
        gold_item = GoldItem(
            campaign_id=campaign.id,
            external_id="g1",
            payload=gold_payload or {"image": "gold.png", "sentence": "Two green triangles."},
            answer=gold_answer if gold_answer is not None else {"rating": 4},
        )
        session.add_all([item, gold_item])
        session.flush()
        assignment_ids = []
        for n in range(held):
            published = PublishedHIT(
                campaign_id=campaign.id, status="complete", mturk_hit_id=f"3H{n}{worker_id}"
            )
            session.add(published)
            session.flush()
            session.add_all(
                [
                    HITSlot(published_hit_id=published.id, position=0, item_id=item.id),
                    HITSlot(published_hit_id=published.id, position=1, gold_item_id=gold_item.id),
                ]
            )
            assignment_id = f"3A{n}{worker_id}"
            session.add(
                Submission(
                    assignment_id=assignment_id,
                    published_hit_id=published.id,
                    worker_id=worker_id,
                    answers={"answers": answers if answers is not None else [3, 1]},
                    decision=decision,
                    work_seconds=42.0,
                    gold_correct=0,
                    gold_total=1,
                    evidence={"signals": {"suspicious": ["straightline"]}, "held_for": "flag"},
                )
            )
            assignment_ids.append(assignment_id)
        session.add(
            WorkerStats(
                campaign_id=campaign.id,
                worker_id=worker_id,
                gold_correct=gold[0],
                gold_total=gold[1],
                assignments=held,
                flagged=flagged,
                flag_reason=f"gold accuracy {gold[0]}/{gold[1]}" if flagged else None,
            )
        )
        return campaign.id, name, worker_id, assignment_ids


def _token(page: str) -> str:
    found = BeautifulSoup(page, "html.parser").find("input", attrs={"name": "csrf_token"})
    assert found is not None
    return str(found["value"])


def test_the_queue_puts_the_decision_worth_most_first_and_closest_to_the_line_next(
    requester_sessions,
) -> None:
    small = seed(requester_sessions, reward="0.10", held=2, gold=(1, 4))  # $0.20 at stake
    big = seed(requester_sessions, reward="1.00", held=3, gold=(0, 4))  # $3.00
    near = seed(requester_sessions, reward="0.10", held=2, gold=(5, 9))  # $0.20, 56% against 60%
    mine = {small[0], big[0], near[0]}
    with session_scope(requester_sessions) as session:
        page = review_queue(session, mine)
    assert [r.campaign_id for r in page.rows] == [big[0], near[0], small[0]]
    assert page.rows[0].at_stake == Decimal("3.00") and page.rows[0].campaign_name == big[1]
    with session_scope(requester_sessions) as session:
        assert [r.campaign_id for r in review_queue(session, mine, campaign_id=near[0]).rows] == [near[0]]
        paged = review_queue(session, mine, per_page=2, page=2)
    assert paged.total == 3 and paged.pages == 2 and [r.campaign_id for r in paged.rows] == [small[0]]


def test_the_queue_page_names_campaigns_filters_and_pages(live_server, requester_sessions) -> None:
    flagged = seed(requester_sessions)
    held_only = seed(requester_sessions, flagged=False, template="select")
    http = staff_session(live_server.url, requester_sessions)
    page = BeautifulSoup(http.get(live_server.url + "/dashboard/queue").text, "html.parser")
    table = page.find("table", id="queue")
    assert table is not None
    text = table.get_text(" ")
    assert flagged[1] in text and held_only[1] in text and "Work held for a person" in text
    link = table.find("a", string=flagged[2])
    assert link is not None and link["href"] == f"/dashboard/workers/{flagged[0]}/{flagged[2]}"

    def listed(**params: str) -> str:
        found = BeautifulSoup(
            http.get(live_server.url + "/dashboard/queue", params=params).text, "html.parser"
        )
        table = found.find("table", id="queue")
        return table.get_text(" ") if table is not None else ""

    only_select = listed(template="select")
    assert held_only[1] in only_select and flagged[1] not in only_select
    only_flags = listed(reason="flagged")
    assert flagged[1] in only_flags and held_only[1] not in only_flags


def test_a_reviewer_sees_only_the_queue_of_campaigns_assigned_to_them(
    live_server, requester_sessions
) -> None:
    theirs = seed(requester_sessions)
    other = seed(requester_sessions)
    http = staff_session(live_server.url, requester_sessions, role="qa")
    with session_scope(requester_sessions) as session:
        user = session.scalars(select(StaffUser).order_by(StaffUser.id.desc())).first()
        assert user is not None
        assign_campaign(session, user.username, theirs[1])
    page = http.get(live_server.url + "/dashboard/queue").text
    assert theirs[1] in page and other[1] not in page  # the filter's choices too
    assert http.get(f"{live_server.url}/dashboard/assignments/{other[3][0]}").status_code == 404


def test_an_assignments_page_shows_the_item_the_answer_and_the_gold_expected(
    live_server, requester_sessions
) -> None:
    """A template without a view of its own (write): every field shown, answered and expected."""
    campaign_id, name, worker_id, (assignment_id,) = seed(requester_sessions, template="write")
    http = staff_session(live_server.url, requester_sessions)
    response = http.get(f"{live_server.url}/dashboard/assignments/{assignment_id}")
    assert response.status_code == 200
    page = BeautifulSoup(response.text, "html.parser")
    slots = page.select("section.slot")
    assert len(slots) == 2
    item, gold = (s.get_text(" ", strip=True).replace(" :", ":") for s in slots)
    assert "A red circle above a blue square." in item and "answer: 3" in item
    assert "Two green triangles." in gold and "answer: 1" in gold and "expected rating: 4" in gold
    assert "answered wrong" in gold
    images = [img["src"] for img in page.select("section.slot img")]
    assert images == [
        f"/dashboard/campaigns/{campaign_id}/media/scene.png",
        f"/dashboard/campaigns/{campaign_id}/media/gold.png",
    ]
    signals = page.find(id="signals")
    assert signals is not None and "gave the same answer to nearly every item" in signals.get_text()
    assert "42 s" in page.get_text() and name in page.get_text()


def test_the_rating_templates_own_view_marks_the_workers_rating_and_golds_on_the_scale(
    live_server, requester_sessions
) -> None:
    campaign_id, _, _, (assignment_id,) = seed(requester_sessions, template="rating")
    http = staff_session(live_server.url, requester_sessions)
    page = BeautifulSoup(
        http.get(f"{live_server.url}/dashboard/assignments/{assignment_id}").text, "html.parser"
    )
    item, gold = page.select("section.slot")
    assert "A red circle above a blue square." in item.get_text()
    (given,) = item.select("li.given")
    assert given.get_text(strip=True).startswith("3:") and "the worker's rating" in given.get_text()
    assert item.select("li.wanted") == []
    (gold_given,) = gold.select("li.given")
    (gold_wanted,) = gold.select("li.wanted")
    assert gold_given.get_text(strip=True).startswith("1:")
    assert gold_wanted.get_text(strip=True).startswith("4:") and "expected" in gold_wanted.get_text()
    assert [img["src"] for img in page.select("section.slot img")] == [
        f"/dashboard/campaigns/{campaign_id}/media/scene.png",
        f"/dashboard/campaigns/{campaign_id}/media/gold.png",
    ]


def test_flag_buttons_are_only_for_flagged_workers_and_say_what_they_do(
    live_server, requester_sessions
) -> None:
    flagged = seed(requester_sessions, held=3)
    unflagged = seed(requester_sessions, held=2, flagged=False)
    http = staff_session(live_server.url, requester_sessions)
    page = http.get(f"{live_server.url}/dashboard/workers/{flagged[0]}/{flagged[2]}").text
    assert "Clear the flag: approve 3 held assignments" in page
    assert "Confirm the flag: reject 3 held assignments" in page
    quiet = http.get(f"{live_server.url}/dashboard/workers/{unflagged[0]}/{unflagged[2]}").text
    assert "Clear the flag" not in quiet and "Confirm the flag" not in quiet
    # A hand-made post to clear an unflagged worker does nothing and says so.
    done = http.post(
        f"{live_server.url}/dashboard/workers/{unflagged[0]}/{unflagged[2]}/review",
        data={"csrf_token": _token(quiet), "action": "clear"},
    )
    assert "Nothing done" in done.text and "is not flagged" in done.text
    with session_scope(requester_sessions) as session:
        entries = session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == unflagged[0])).all()
        decisions = session.scalars(
            select(Submission.decision).where(Submission.worker_id == unflagged[2])
        ).all()
    assert entries == [] and set(decisions) == {"held"}


def test_clearing_a_flag_says_what_stays_rejected_and_the_log_names_the_reviewer(
    live_server, requester_sessions
) -> None:
    campaign_id, _, worker_id, _ = seed(requester_sessions, held=2)
    with session_scope(requester_sessions) as session:
        published = PublishedHIT(campaign_id=campaign_id, status="complete", mturk_hit_id="3HR" + worker_id)
        session.add(published)
        session.flush()
        session.add(
            Submission(
                assignment_id="3AR" + worker_id,
                published_hit_id=published.id,
                worker_id=worker_id,
                answers={"answers": [1, 1]},
                decision="reject",
            )
        )
    http = staff_session(live_server.url, requester_sessions)
    page = http.get(f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}").text
    done = http.post(
        f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}/review",
        data={"csrf_token": _token(page), "action": "clear", "note": "a careful rater after all"},
    ).text
    assert "2 held assignments approved" in done
    assert "1 assignment the quality model rejected earlier stay rejected" in done
    standing = BeautifulSoup(done, "html.parser").find(id="standing")
    assert (
        standing is not None and "2 approved" in standing.get_text() and "1 rejected" in standing.get_text()
    )
    audit = BeautifulSoup(done, "html.parser").find(id="audit")
    assert audit is not None
    assert "admin-" in audit.get_text() and "a careful rater after all" in audit.get_text()
    assert "staff #" not in done


def test_rejecting_from_the_evidence_page_sends_the_reason_the_worker_reads(
    live_server, requester_sessions
) -> None:
    campaign_id, _, worker_id, (assignment_id,) = seed(requester_sessions)
    http = staff_session(live_server.url, requester_sessions)
    page = http.get(f"{live_server.url}/dashboard/assignments/{assignment_id}").text
    form = BeautifulSoup(page, "html.parser").find("form", action=lambda a: a and a.endswith("/decide"))
    assert form is not None
    done = http.post(
        live_server.url + str(form["action"]),
        data={
            "csrf_token": _token(page),
            "action": "reject",
            "back": "assignment",
            "feedback": "The ratings ignore the pictures.",
        },
    )
    assert done.status_code == 200 and "Reject queued" in done.text and "rejected" in done.text
    with session_scope(requester_sessions) as session:
        (entry,) = session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)).all()
    assert (entry.action, entry.target) == ("reject", assignment_id)
    assert entry.payload["feedback"] == "The ratings ignore the pictures."


def test_the_signed_out_sign_in_page_offers_no_sign_out(live_server) -> None:
    page = requests.get(live_server.url + "/dashboard/signin").text
    assert "Sign out" not in page and "Sign in" in page


def test_the_audit_log_names_who_decided_what_on_which_assignments_and_on_what_evidence(
    live_server, requester_sessions
) -> None:
    campaign_id, name, worker_id, (assignment_id,) = seed(requester_sessions)
    http = staff_session(live_server.url, requester_sessions)
    page = http.get(f"{live_server.url}/dashboard/assignments/{assignment_id}").text
    digest = BeautifulSoup(page, "html.parser").find("input", attrs={"name": "evidence_sha256"})
    assert digest is not None and len(str(digest["value"])) == 64
    http.post(
        f"{live_server.url}/dashboard/submissions/"
        + str(BeautifulSoup(page, "html.parser").select_one("form[action$='/decide']")["action"]).split("/")[
            -2
        ]  # type: ignore[index]
        + "/decide",
        data={
            "csrf_token": _token(page),
            "action": "reject",
            "evidence_sha256": digest["value"],
            "note": '=HYPERLINK("x") ratings ignore the pictures',
            "feedback": "Please look at each picture.",
        },
    )
    log = BeautifulSoup(
        http.get(live_server.url + "/dashboard/audit", params={"campaign": campaign_id}).text, "html.parser"
    )
    table = log.find("table", id="audit-log")
    assert table is not None
    (row,) = table.select("tbody tr")
    cells = [td.get_text(" ", strip=True) for td in row.find_all("td")]
    assert cells[1].startswith("admin-") and cells[2] == name and cells[3] == worker_id
    assert cells[4] == "rejected" and cells[5] == assignment_id and "ratings ignore the pictures" in cells[6]
    assert row.find("code")["title"] == digest["value"]  # type: ignore[index]
    exported = http.get(live_server.url + "/dashboard/audit.csv", params={"campaign": campaign_id})
    assert exported.headers["Content-Type"].startswith("text/csv")
    lines = exported.text.splitlines()
    assert lines[0] == "when,reviewer,campaign,worker,action,assignments,why,evidence_sha256"
    assert len(lines) == 2 and assignment_id in lines[1] and str(digest["value"]) in lines[1]
    assert "'=HYPERLINK" in lines[1]  # a note a spreadsheet would run as a formula is quoted
    # Another reviewer's view of the log is limited to their campaigns.
    qa = staff_session(live_server.url, requester_sessions, role="qa")
    assert assignment_id not in qa.get(live_server.url + "/dashboard/audit").text
    assert assignment_id not in qa.get(live_server.url + "/dashboard/audit.csv").text


def test_a_bulk_approval_states_the_money_first_then_decides_each_selected_assignment_once(
    live_server, requester_sessions
) -> None:
    campaign_id, _, worker_id, assignments = seed(requester_sessions, held=3, reward="0.50")
    http = staff_session(live_server.url, requester_sessions)
    page = http.get(f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}").text
    boxes = BeautifulSoup(page, "html.parser").select('input[name="submission"][form="bulk"]')
    assert len(boxes) == 3
    chosen = [str(b["value"]) for b in boxes[:2]]
    form = {"csrf_token": _token(page), "action": "approve", "back": "worker", "submission": chosen}
    confirm = http.post(live_server.url + "/dashboard/bulk", data=form)
    money = BeautifulSoup(confirm.text, "html.parser").find(id="money")
    assert money is not None
    assert "$1.00 in rewards" in money.get_text() and "$0.20 in fees" in money.get_text()
    assert "Approve these 2 assignments and pay $1.20" in confirm.text
    with session_scope(requester_sessions) as session:  # nothing decided by looking
        assert session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)).all() == []
    done = http.post(
        live_server.url + "/dashboard/bulk/apply", data={**form, "csrf_token": _token(confirm.text)}
    )
    assert "2 assignments approved" in done.text
    again = http.post(
        live_server.url + "/dashboard/bulk/apply", data={**form, "csrf_token": _token(done.text)}
    )
    assert "0 assignments approved; 2 had been decided meanwhile" in again.text
    with session_scope(requester_sessions) as session:
        entries = session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)).all()
        audit = session.scalars(select(ReviewAction).where(ReviewAction.campaign_id == campaign_id)).all()
        decisions = dict(
            session.execute(
                select(Submission.assignment_id, Submission.decision).where(Submission.worker_id == worker_id)
            ).all()
        )
    assert sorted(e.target for e in entries if e.action == "approve") == sorted(assignments[:2])
    assert sorted(a.assignments[0] for a in audit if a.assignments) == sorted(assignments[:2])
    assert decisions == {assignments[0]: "approve", assignments[1]: "approve", assignments[2]: "held"}


def test_the_spans_templates_own_view_highlights_the_workers_marks_and_golds(
    live_server, requester_sessions
) -> None:
    text = {"image": "s.png", "correct": "A <b>red</b> circle.", "generated": "A blue circle & a cat."}
    _, _, _, (assignment_id,) = seed(
        requester_sessions,
        template="spans",
        item_payload=text,
        gold_payload=text,
        gold_answer={"mistakes": [[2, 6]], "missing": []},
        answers=[{"mistakes": [[16, 21]], "missing": [[2, 12]]}, {"mistakes": [[2, 6]], "missing": []}],
    )
    http = staff_session(live_server.url, requester_sessions)
    response = http.get(f"{live_server.url}/dashboard/assignments/{assignment_id}")
    assert "<b>red</b>" not in response.text  # the texts are escaped, marks or not
    item, gold = BeautifulSoup(response.text, "html.parser").select("section.slot")
    assert [m.get_text() for m in item.select("mark.given")] == ["a cat", "<b>red</b>"]
    assert [m.get_text() for m in gold.select("mark.given")] == ["blue"]
    assert [m.get_text() for m in gold.select("mark.wanted")] == ["blue"]


def test_marking_spans_escapes_the_text_and_skips_marks_that_make_no_sense() -> None:
    from server.requester.dashboard.base import marked

    assert str(marked("a <i>b</i> c", [[2, 10]])) == 'a <mark class="marked">&lt;i&gt;b&lt;/i&gt;</mark> c'
    # Overlapping, reversed, negative and non-integer spans are left out, never raise.
    assert str(marked("abcdef", [[0, 2], [1, 3], [4, 3], [-1, 2], ["x", 4], [4, 6]])) == (
        '<mark class="marked">ab</mark>cd<mark class="marked">ef</mark>'
    )
    assert str(marked("abc", None)) == "abc"


def test_numbers_no_row_can_have_get_an_answer_not_a_server_error(live_server, requester_sessions) -> None:
    """Found by hand after the fuzzer's 40 examples missed it: ids past 32 bits overflowed the driver."""
    http = staff_session(live_server.url, requester_sessions)
    big = "9" * 25
    for path in (
        f"/dashboard/queue?campaign={big}&page={big}",
        f"/dashboard/audit?campaign={big}&page={big}",
        f"/dashboard/audit.csv?campaign={big}",
        "/dashboard/audit?page=0",
        "/dashboard/queue?page=%C2%B2&campaign=%C2%B2",  # a digit int() cannot read
    ):
        assert http.get(live_server.url + path).status_code == 200, path
    page = http.get(live_server.url + "/dashboard/queue").text
    for path in ("/dashboard/bulk", "/dashboard/bulk/apply"):
        response = http.post(
            live_server.url + path,
            data={"csrf_token": _token(page), "action": "approve", "submission": [big, str(2**31)]},
        )
        said = response.text
        assert response.status_code == 200 and ("Select at least one" in said or "0 assignments" in said)


def test_a_workers_profile_spans_their_campaigns_within_the_users_scope(
    live_server, requester_sessions
) -> None:
    first = seed(requester_sessions, held=2, gold=(1, 4))
    worker_id = first[2]
    with session_scope(requester_sessions) as session:
        # The same worker in a second campaign, approved there, with a bonus and a message on record.
        campaign = Campaign(
            name=first[1] + "-b", template="select", spec={"reward": "0.25"}, budget=Decimal("5")
        )
        session.add(campaign)
        session.flush()
        published = PublishedHIT(campaign_id=campaign.id, status="complete", mturk_hit_id="3HB" + worker_id)
        session.add(published)
        session.flush()
        session.add(
            Submission(
                assignment_id="3AB" + worker_id,
                published_hit_id=published.id,
                worker_id=worker_id,
                answers={"answers": [[0]]},
                decision="approve",
                graded=True,
                gold_correct=2,
                gold_total=2,
            )
        )
        session.add(WorkerStats(campaign_id=campaign.id, worker_id=worker_id, gold_correct=2, gold_total=2))
        session.add_all(
            [
                OutboxEntry(
                    campaign_id=campaign.id,
                    action="bonus",
                    target=f"c{campaign.id}:{worker_id}",
                    payload={"amount": "0.50", "reason": "Excellent checks."},
                ),
                OutboxEntry(
                    campaign_id=campaign.id,
                    action="notify",
                    target=f"n{campaign.id}:{worker_id}",
                    payload={"worker_id": worker_id, "subject": "About your work", "message": "..."},
                ),
                OutboxEntry(  # about someone else: not on this worker's profile
                    campaign_id=campaign.id,
                    action="bonus",
                    target=f"c{campaign.id}:AOTHER",
                    payload={"amount": "9.99", "reason": "Not theirs."},
                ),
            ]
        )
        second_id = campaign.id
        # A reviewer looked again at the approved work there, and disagreed.
        session.add(
            SpotCheck(
                campaign_id=campaign.id,
                worker_id=worker_id,
                assignment_id="3AB" + worker_id,
                reason="first",
                verdict="disagree",
                note="misread the task",
            )
        )
    http = staff_session(live_server.url, requester_sessions)
    page = BeautifulSoup(http.get(f"{live_server.url}/dashboard/workers/{worker_id}").text, "html.parser")
    campaigns = page.find("table", id="campaigns")
    assert campaigns is not None
    names = [a.get_text() for a in campaigns.select("tbody a")]
    assert names == sorted([first[1], first[1] + "-b"])
    actions = page.find("table", id="actions")
    assert actions is not None
    text = actions.get_text(" ")
    assert "$0.50: Excellent checks." in text and "About your work" in text and "9.99" not in text
    summary = page.find(id="summary")
    assert summary is not None and "$0.25 in approved rewards" in summary.get_text()
    rows = {r.find("a").get_text(): r.get_text(" ") for r in campaigns.select("tbody tr")}
    assert "1 disagreed of 1 checked" in rows[first[1] + "-b"] and "none drawn" in rows[first[1]]
    # A reviewer assigned only the second campaign sees only it; one assigned neither, nothing.
    qa = staff_session(live_server.url, requester_sessions, role="qa")
    assert qa.get(f"{live_server.url}/dashboard/workers/{worker_id}").status_code == 404
    with session_scope(requester_sessions) as session:
        user = session.scalars(select(StaffUser).order_by(StaffUser.id.desc())).first()
        assert user is not None
        assign_campaign(session, user.username, str(second_id))
    seen = BeautifulSoup(qa.get(f"{live_server.url}/dashboard/workers/{worker_id}").text, "html.parser")
    assert [a.get_text() for a in seen.select("#campaigns tbody a")] == [first[1] + "-b"]


def test_a_bulk_post_cannot_reach_another_campaigns_work_and_decides_across_campaigns_in_one_go(
    live_server, requester_sessions
) -> None:
    mine = seed(requester_sessions, held=1)
    also_mine = seed(requester_sessions, held=1)
    hidden = seed(requester_sessions, held=1)
    qa = staff_session(live_server.url, requester_sessions, role="qa")
    with session_scope(requester_sessions) as session:
        user = session.scalars(select(StaffUser).order_by(StaffUser.id.desc())).first()
        assert user is not None
        assign_campaign(session, user.username, mine[1])
        assign_campaign(session, user.username, also_mine[1])
        ids = {
            a: i
            for a, i in session.execute(
                select(Submission.assignment_id, Submission.id).where(
                    Submission.assignment_id.in_(mine[3] + also_mine[3] + hidden[3])
                )
            ).all()
        }
    page = qa.get(live_server.url + "/dashboard/queue").text
    form = {
        "csrf_token": _token(page),
        "action": "reject",
        "feedback": "Please read each sentence.",
        "submission": [str(i) for i in ids.values()],
    }
    done = qa.post(live_server.url + "/dashboard/bulk/apply", data=form)
    assert done.status_code == 200 and "2 assignments rejected" in done.text
    with session_scope(requester_sessions) as session:
        chosen = select(Submission.assignment_id, Submission.decision).where(
            Submission.id.in_(list(ids.values()))
        )
        decided = dict(session.execute(chosen).all())
    assert decided == {mine[3][0]: "reject", also_mine[3][0]: "reject", hidden[3][0]: "held"}


def test_the_media_route_serves_pictures_only(live_server, requester_sessions, tmp_path) -> None:
    campaign_id, _, _, _ = seed(requester_sessions)
    (tmp_path / "notes.html").write_text("<script>alert(1)</script>")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "p.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        campaign.spec = {**campaign.spec, "media_path": str(tmp_path)}
    http = staff_session(live_server.url, requester_sessions)
    base = f"{live_server.url}/dashboard/campaigns/{campaign_id}/media/"
    assert http.get(base + "notes.html").status_code == 404
    assert http.get(base + "..%2Fetc%2Fpasswd.png").status_code == 404
    picture = http.get(base + "sub/p.png")
    assert picture.status_code == 200 and picture.headers["X-Content-Type-Options"] == "nosniff"
