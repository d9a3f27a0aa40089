"""Launching a recruiting campaign creates its Prolific study once, and publishes it once."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import select

from demo.data import write_rating_demo
from hits.db import session_scope
from hits.requester.campaigns.recruitment import StudyInterrupted, launch_study
from hits.requester.files.campaign import load_campaign_file
from hits.requester.files.recruit import RecruitSpec, places_needed, study_filters
from hits.requester.quality.followups import committed_cost
from hits.requester.recruit.base import RecruitUnavailable, Study, StudyDraft
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin
from hits.requester.tables.campaigns import Campaign
from hits.requester.tables.recruiting import Recruitment
from tests.helpers import publish_campaign_file, rating_campaign_spec

RECRUIT = {
    "platform": "prolific",
    "title": "Rate some drawings",
    "description": "Rate how well sentences describe drawings.",
    "reward": 150,
    "estimated_minutes": 8,
    "hits_per_participant": 2,
    "eligibility": {"participant_groups": ["g1"], "exclude_studies": ["s0"]},
    "currency": "USD",
}


def recruiting_campaign(folder: Path, name: str, market: Any, requester_sessions: Any, url: str) -> int:
    """A rating campaign of 3 HITs x 2 assignments with a recruit section, its HITs published."""
    write_rating_demo(folder, items=6, gold=4, seed=1)
    spec = rating_campaign_spec(name, recruit=RECRUIT)
    return publish_campaign_file(folder, spec, market, requester_sessions, url)


class Flaky(ProlificClient):
    """A client whose chosen calls fail once (after doing their work, if ``after``)."""

    def __init__(self, *args: Any, fail: str, after: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fail, self.after = fail, after

    def create_study(self, draft: StudyDraft) -> Study:
        if self.fail == "create":
            self.fail = ""
            if not self.after:
                raise RecruitUnavailable(503, "down")
            super().create_study(draft)
            raise RecruitUnavailable(0, "the answer was lost")
        return super().create_study(draft)

    def transition_study(self, study_id: str, action: str) -> Study:
        if self.fail == "publish":
            self.fail = ""
            if self.after:
                super().transition_study(study_id, action)
            raise RecruitUnavailable(503, "down")
        return super().transition_study(study_id, action)


def client(standin: RunningStandin, **flaky: Any) -> ProlificClient:
    options: dict[str, Any] = {"backoff": 0, "sleep": lambda _: None}
    if flaky:
        return Flaky(standin.api_url, standin.app.token, **flaky, **options)
    return ProlificClient(standin.api_url, standin.app.token, **options)


def test_the_recruit_section_is_read_and_its_defaults_computed(tmp_path: Path) -> None:
    write_rating_demo(tmp_path, items=6, gold=4, seed=1)
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(rating_campaign_spec("r", recruit=RECRUIT)))
    recruit = load_campaign_file(tmp_path / "campaign.yaml").spec.recruit
    assert isinstance(recruit, RecruitSpec)
    assert places_needed(recruit, hit_count=3, assignments_per_hit=2) == 3
    assert places_needed(recruit.model_copy(update={"hits_per_participant": 4}), 3, 2) == 2
    assert study_filters(recruit.eligibility) == [
        {"filter_id": "participant_group_allowlist", "selected_values": ["g1"]},
        {"filter_id": "previous_studies_blocklist", "selected_values": ["s0"]},
    ]
    bad = rating_campaign_spec("r", recruit={**RECRUIT, "platform": "mturk"})
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(bad))
    with pytest.raises(Exception, match="platform"):
        load_campaign_file(tmp_path / "campaign.yaml")


def test_launch_creates_and_publishes_one_study(
    tmp_path: Path, market: Any, requester_sessions: Any, live_server: Any, standin: RunningStandin
) -> None:
    campaign_id = recruiting_campaign(tmp_path, "rc-once", market, requester_sessions, live_server.url)
    report = launch_study(requester_sessions, client(standin), campaign_id, live_server.url)
    assert report is not None and report.created and report.published and report.places == 3
    study = standin.app.state.studies[report.study_id]
    assert study["status"] == "ACTIVE"
    assert study["external_study_url"].startswith(f"{live_server.url}/recruit/prolific/enter?")
    assert study["filters"][0]["filter_id"] == "participant_group_allowlist"
    again = launch_study(requester_sessions, client(standin), campaign_id, live_server.url)
    assert again is not None and again.study_id == report.study_id and not again.created
    assert len(standin.app.state.studies) == 1
    with session_scope(requester_sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert row is not None and row.study_id == report.study_id and row.status == "published"


@pytest.mark.parametrize("after", [False, True], ids=["publish-refused", "publish-answer-lost"])
def test_interrupted_between_create_and_publish_resumes_on_the_same_study(
    after: bool,
    tmp_path: Path,
    market: Any,
    requester_sessions: Any,
    live_server: Any,
    standin: RunningStandin,
) -> None:
    campaign_id = recruiting_campaign(
        tmp_path, f"rc-pub-{after}", market, requester_sessions, live_server.url
    )
    with pytest.raises(StudyInterrupted, match="not published"):
        launch_study(
            requester_sessions, client(standin, fail="publish", after=after), campaign_id, live_server.url
        )
    (study_id,) = standin.app.state.studies
    report = launch_study(requester_sessions, client(standin), campaign_id, live_server.url)
    assert report is not None and report.study_id == study_id and not report.created
    assert len(standin.app.state.studies) == 1
    assert standin.app.state.studies[study_id]["status"] == "ACTIVE"
    publishes = [c for c in standin.app.state.calls if c == ("POST", f"/studies/{study_id}/transition/")]
    # Refused: only the resume's call reached Prolific; answer lost: the resume saw it published.
    assert len(publishes) == 1


def test_a_creation_whose_answer_was_lost_is_found_not_made_again(
    tmp_path: Path, market: Any, requester_sessions: Any, live_server: Any, standin: RunningStandin
) -> None:
    campaign_id = recruiting_campaign(tmp_path, "rc-lost", market, requester_sessions, live_server.url)
    with pytest.raises(StudyInterrupted, match="not created"):
        launch_study(
            requester_sessions, client(standin, fail="create", after=True), campaign_id, live_server.url
        )
    assert len(standin.app.state.studies) == 1
    report = launch_study(requester_sessions, client(standin), campaign_id, live_server.url)
    assert report is not None and not report.created and report.published
    assert len(standin.app.state.studies) == 1


def test_a_campaign_without_recruit_makes_no_study(
    tmp_path: Path, market: Any, requester_sessions: Any, live_server: Any, standin: RunningStandin
) -> None:
    write_rating_demo(tmp_path, items=4, gold=4, seed=1)
    campaign_id = publish_campaign_file(
        tmp_path, rating_campaign_spec("rc-none"), market, requester_sessions, live_server.url
    )
    assert launch_study(requester_sessions, client(standin), campaign_id, live_server.url) is None
    assert standin.app.state.studies == {}


def campaign_with(
    folder: Path, name: str, market: Any, requester_sessions: Any, url: str, **recruit: Any
) -> int:
    write_rating_demo(folder, items=6, gold=4, seed=1)
    section = {k: v for k, v in {**RECRUIT, **recruit}.items() if v is not None}
    return publish_campaign_file(
        folder, rating_campaign_spec(name, recruit=section), market, requester_sessions, url
    )


def test_the_study_s_cost_counts_in_the_budget_and_a_study_that_does_not_fit_is_not_created(
    tmp_path: Path, market: Any, requester_sessions: Any, live_server: Any, standin: RunningStandin
) -> None:
    # The file's estimate (3 places at $1.50 with a third on top: $6.00) fits the $10 budget, but
    # this account's fee on rewards is 150%: Prolific says $11.25, more than the budget has left.
    standin.app.state.study_fee_rate = Decimal("1.5")
    campaign_id = campaign_with(tmp_path, "rc-cost", market, requester_sessions, live_server.url)
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        before = committed_cost(session, campaign)
    with pytest.raises(StudyInterrupted, match=r"its Prolific study .* would cost 11\.25, but"):
        launch_study(requester_sessions, client(standin), campaign_id, live_server.url)
    assert standin.app.state.studies == {}  # nothing made on Prolific
    assert ("POST", "/study-cost-calculator/") in standin.app.state.calls

    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        campaign.budget = Decimal("30.00")  # the requester raises it, then resumes
    report = launch_study(requester_sessions, client(standin), campaign_id, live_server.url)
    assert report is not None and report.created and report.published
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert campaign is not None and row is not None
        assert row.study_cost == Decimal("11.25")
        assert committed_cost(session, campaign) == before + Decimal("11.25")
    launch_study(requester_sessions, client(standin), campaign_id, live_server.url)
    costs = [c for c in standin.app.state.calls if c == ("POST", "/study-cost-calculator/")]
    assert len(costs) == 2  # counted once: a launch run again asks no more


def test_a_study_in_pounds_is_counted_in_dollars(
    tmp_path: Path, market: Any, requester_sessions: Any, live_server: Any, standin: RunningStandin
) -> None:
    gbp = campaign_with(
        tmp_path, "rc-gbp", market, requester_sessions, live_server.url, currency="GBP", exchange_rate="0.8"
    )
    launch_study(requester_sessions, client(standin), gbp, live_server.url)
    with session_scope(requester_sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == gbp))
        # 3 places at £1.50, with the fee £6.00: $7.50 at 0.8 pounds to the dollar.
        assert row is not None and row.study_cost == Decimal("7.50")


@pytest.mark.parametrize(
    ("recruit", "error"),
    [
        ({"currency": None}, "needs currency"),
        ({"currency": "GBP"}, "needs exchange_rate"),
        ({"reward": 1500}, r"needs .* and 60\.01 for its Prolific study's places"),
    ],
)
def test_a_prolific_campaign_file_is_refused_before_anything_is_published(
    tmp_path: Path, requester_sessions: Any, recruit: dict[str, Any], error: str
) -> None:
    """No currency (or no rate for pounds): the study's cost cannot be counted; too dear: over budget."""
    from hits.requester.campaigns.service import create_campaign

    write_rating_demo(tmp_path, items=6, gold=4, seed=1)
    section = {k: v for k, v in {**RECRUIT, **recruit}.items() if v is not None}
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(rating_campaign_spec("rc-bad", recruit=section)))
    with pytest.raises(Exception, match=error), session_scope(requester_sessions) as session:
        create_campaign(session, load_campaign_file(tmp_path / "campaign.yaml"))
