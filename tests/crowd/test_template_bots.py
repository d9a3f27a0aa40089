"""Bots work every template's page over HTTP; a perfect bot passes every gold item it meets."""

from __future__ import annotations

import csv
import io

import pytest
from sqlalchemy import select

from demo.crowd import PROFILES, Bot, Profile
from demo.tasks import demo_tasks, get_demo_task
from hits.db import session_scope
from hits.requester.campaigns.export import write_batch_csv
from hits.requester.quality.aggregation import aggregate_campaign
from hits.requester.quality.review import decide_workers, grade_submissions
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.templates import available_templates
from hits.requester.templates import get_template as get_template_of
from tests.helpers import launch_template_campaign


def test_every_built_in_template_has_a_demo() -> None:
    assert set(demo_tasks()) == set(available_templates())
    with pytest.raises(KeyError, match="choose one of"):
        get_demo_task("nope")


@pytest.mark.parametrize("template", ["rating", "select", "write", "spans", "target", "compare", "objects"])
def test_a_perfect_bot_gets_every_gold_item_right(
    template, tmp_path, live_server, market, requester_sessions
) -> None:
    task = get_demo_task(template)
    campaign_id, truth, _ = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, template, hits=2, name=f"bots-{template}"
    )
    bot = Bot(
        live_server.url, f"perfect-{template}", Profile("perfect", 1.0), truth, fill_form=task.fill_form
    )
    bot.title_filter = f"bots-{template}"
    result = bot.run(max_hits=2)
    assert result.errors == [] and result.submitted == 2
    with session_scope(requester_sessions) as session:
        ids = session.scalars(
            select(Submission.id).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        graded = grade_submissions(session, list(ids))
        assert len(graded) == 2
        # Every template's results aggregate with the method it declares.
        aggregated = aggregate_campaign(session, campaign_id)
        assert len(aggregated) == 2 * task.items_per_hit
        assert {a.method for a in aggregated} == {get_template_of(template).aggregation}
        # ... and export in MTurk's batch-results layout, one row per assignment.
        out = io.StringIO()
        assert write_batch_csv(session, campaign_id, out) == 2
        rows = list(csv.DictReader(io.StringIO(out.getvalue())))
        assert len(rows) == 2 and all(any(k.startswith("Answer.") and v for k, v in r.items()) for r in rows)
        assert all(any(k.startswith("Input.") for k in r) for r in rows)
        if task.gold_per_hit:
            assert all(s.gold_total == task.gold_per_hit for s in graded)
            assert all(s.gold_correct == s.gold_total for s in graded)
        else:  # the write template: every sentence is one a careful person would write
            sentences = [s for sub in graded for s in sub.answers["answers"]]
            phrasings = {p for options in truth.values() for p in options}
            assert sentences and set(sentences) <= phrasings


def test_a_spammer_fails_gold_on_the_target_template(
    tmp_path, live_server, market, requester_sessions
) -> None:
    task = get_demo_task("target")
    campaign_id, truth, _ = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "target", hits=2, name="bots-spam-target"
    )
    # Always wrong, never random: the gold must notice every answer.
    bot = Bot(live_server.url, "wrong-target", Profile("always-off", 0.0), truth, fill_form=task.fill_form)
    bot.title_filter = "bots-spam-target"
    assert bot.run(max_hits=2).submitted == 2
    with session_scope(requester_sessions) as session:
        ids = session.scalars(
            select(Submission.id).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        graded = grade_submissions(session, list(ids))
        assert sum(s.gold_total for s in graded) == 2 * task.gold_per_hit
        assert sum(s.gold_correct for s in graded) == 0


def test_free_text_is_judged_by_spelling_with_confidence(
    tmp_path, live_server, market, requester_sessions
) -> None:
    from hits.requester.tables.campaigns import OutboxEntry, WorkerStats

    task = get_demo_task("write")
    campaign_id, truth, _ = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "write", hits=3, name="bots-text"
    )
    bots = {
        profile: Bot(
            live_server.url, f"text-{profile}", PROFILES[profile], truth, seed=5, fill_form=task.fill_form
        )
        for profile in ("diligent", "spammer")
    }
    for bot in bots.values():
        bot.title_filter = "bots-text"
        assert bot.run(max_hits=3).submitted == 3
    with session_scope(requester_sessions) as session:
        for bot in bots.values():
            for i in session.scalars(
                select(Submission.id).join(PublishedHIT).where(Submission.worker_id == bot.result.worker_id)
            ):
                grade_submissions(session, [i])
            decide_workers(session, campaign_id, [bot.result.worker_id])
        actions = {
            bot.result.worker_id: {
                e.action
                for e in session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id))
                if e.target
                in set(
                    session.scalars(
                        select(Submission.assignment_id).where(Submission.worker_id == bot.result.worker_id)
                    )
                )
            }
            for bot in bots.values()
        }
        assert actions[bots["diligent"].result.worker_id] == {"approve"}
        assert actions[bots["spammer"].result.worker_id] == {"reject"}
        spammer = session.scalar(
            select(WorkerStats).where(WorkerStats.worker_id == bots["spammer"].result.worker_id)
        )
        assert spammer is not None and spammer.flagged and "misspelt words" in (spammer.flag_reason or "")
