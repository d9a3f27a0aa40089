"""The Prolific client against the stand-in: the token, paging, retries, the documented refusals."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
import requests

from hits.requester.recruit.base import (
    CompletionCode,
    RecruitAuthError,
    RecruitRefused,
    RecruitUnavailable,
    StudyDraft,
)
from hits.requester.recruit.prolific import wire
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin

REASON = "Your answers to the checked items of this task were mostly wrong, so this place is rejected. " * 2


def draft(places: int = 3, name: str = "hitforge-c1-abc") -> StudyDraft:
    return StudyDraft(
        title="Rate drawings",
        description="Rate a few drawings.",
        internal_name=name,
        entry_url=wire.entry_url("http://127.0.0.1:1/recruit/prolific/enter"),
        reward=150,
        estimated_minutes=10,
        places=places,
        completion_codes=(
            CompletionCode("DONE123", "COMPLETED"),
            CompletionCode("NOWORK1", "OTHER", "none left"),
        ),
    )


def published(prolific: ProlificClient, places: int = 3) -> str:
    study = prolific.create_study(draft(places))
    assert study.status == "UNPUBLISHED"
    assert prolific.transition_study(study.id, "PUBLISH").status == "ACTIVE"
    return study.id


def test_every_call_carries_the_token_and_a_wrong_token_is_refused(standin: RunningStandin) -> None:
    reply = requests.get(standin.api_url + "studies/", timeout=5)
    assert reply.status_code == 401
    wrong = ProlificClient(standin.api_url, "not-the-token", backoff=0, sleep=lambda _: None)
    with pytest.raises(RecruitAuthError) as caught:
        wrong.get_study("x")
    assert "not-the-token" not in str(caught.value)
    assert "not-the-token" not in repr(wrong)
    good = requests.get(
        standin.api_url + "studies/", headers={"Authorization": f"Token {standin.app.token}"}, timeout=5
    )
    assert good.status_code == 200


def test_study_body_follows_the_description(prolific: ProlificClient, standin: RunningStandin) -> None:
    study_id = published(prolific)
    stored = standin.app.state.studies[study_id]
    assert stored["prolific_id_option"] == "url_parameters"
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in stored["external_study_url"]
    assert "STUDY_ID={{%STUDY_ID%}}" in stored["external_study_url"]
    assert "SESSION_ID={{%SESSION_ID%}}" in stored["external_study_url"]
    assert stored["completion_codes"][0] == {
        "code": "DONE123",
        "code_type": "COMPLETED",
        "actions": [{"action": "MANUALLY_REVIEW"}],
        "actor": "participant",
    }
    assert stored["completion_codes"][1]["actions"] == [
        {"action": "REQUEST_RETURN", "return_reason": "none left"}
    ]
    assert prolific.find_study("hitforge-c1-abc").id == study_id  # type: ignore[union-attr]
    assert prolific.find_study("nobody") is None


def test_all_45_submissions_are_read_in_3_pages(prolific: ProlificClient, standin: RunningStandin) -> None:
    study_id = published(prolific, places=45)
    sessions = {standin.app.take_place(study_id, f"p{n:02d}") for n in range(45)}
    standin.app.state.calls.clear()
    listed = prolific.submissions(study_id)
    assert {s.id for s in listed} == sessions
    assert {s.participant_id for s in listed} == {f"p{n:02d}" for n in range(45)}
    pages = [c for c in standin.app.state.calls if c == ("GET", "/submissions/")]
    assert len(pages) == 3


def test_throttling_and_faults_are_retried_then_given_up(
    prolific: ProlificClient, standin: RunningStandin
) -> None:
    study_id = published(prolific)
    standin.app.state.faults[:] = [429, 503]
    assert prolific.get_study(study_id).id == study_id
    assert standin.app.state.calls[-3:] == [("GET", f"/studies/{study_id}/")] * 3
    standin.app.state.faults[:] = [503] * 10
    with pytest.raises(RecruitUnavailable):
        prolific.get_study(study_id)


def test_reject_needs_a_category_and_100_characters(
    prolific: ProlificClient, standin: RunningStandin
) -> None:
    study_id = published(prolific)
    session = standin.app.take_place(study_id, "p1")
    standin.app.finish(session, "DONE123")
    calls = len(standin.app.state.calls)
    with pytest.raises(ValueError, match="100 characters"):
        prolific.reject(session, "LOW_EFFORT", "too short")
    assert len(standin.app.state.calls) == calls  # never sent
    # The stand-in refuses it too, whoever sends it.
    raw = requests.post(
        f"{standin.api_url}submissions/{session}/transition/",
        json={"action": "REJECT", "rejection_category": "LOW_EFFORT", "message": "short"},
        headers={"Authorization": f"Token {standin.app.token}"},
        timeout=5,
    )
    assert raw.status_code == 400
    assert prolific.reject(session, "LOW_EFFORT", REASON).status == "REJECTED"


def test_transitions_a_status_does_not_allow_are_refused(
    prolific: ProlificClient, standin: RunningStandin
) -> None:
    study_id = published(prolific)
    returned = standin.app.take_place(study_id, "p1")
    standin.app.give_back(returned)
    with pytest.raises(RecruitRefused):
        prolific.approve(returned)
    active = standin.app.take_place(study_id, "p2")
    with pytest.raises(RecruitRefused):
        prolific.approve(active)  # still working: nothing to approve
    standin.app.finish(active, "DONE123")
    assert prolific.approve(active).status == "APPROVED"
    assert prolific.approve(active).status == "APPROVED"  # the same request again is ignored
    with pytest.raises(RecruitRefused):
        prolific.reject(active, "LOW_EFFORT", REASON)  # once changed, final


def test_bonus_pay_pays_again_when_called_again(prolific: ProlificClient, standin: RunningStandin) -> None:
    study_id = published(prolific)
    standin.app.take_place(study_id, "p1")  # bonuses go to the study's participants only
    bonus = prolific.set_up_bonuses(study_id, {"p1": "1.25"})
    prolific.pay_bonuses(bonus.id)
    prolific.pay_bonuses(bonus.id)
    assert len(standin.app.state.paid) == 2  # as documented: the client must call it once


def test_a_bonus_set_up_says_what_paying_takes_with_prolific_s_fees(
    prolific: ProlificClient, standin: RunningStandin
) -> None:
    study_id = published(prolific)
    with pytest.raises(RecruitRefused, match="not participants of this study: p9"):
        prolific.set_up_bonuses(study_id, {"p9": "8.50"})
    standin.app.take_place(study_id, "p1")
    # The description's own example: 850 with fees of 283.34 and no VAT takes 1133.34.
    assert prolific.set_up_bonuses(study_id, {"p1": "8.50"}).total == Decimal("11.3334")
    standin.app.state.bonus_vat_rate = Decimal("0.2")
    assert prolific.set_up_bonuses(study_id, {"p1": "8.50"}).total == Decimal("11.9001")


def test_participants_leave_a_group_and_removing_a_stranger_is_harmless(
    prolific: ProlificClient, standin: RunningStandin
) -> None:
    group = prolific.create_participant_group("passed the test")
    prolific.add_to_group(group, ["p1", "p2"])
    prolific.remove_from_group(group, ["p1", "p3"])
    prolific.remove_from_group(group, ["p1"])
    assert standin.app.state.groups[group]["members"] == ["p2"]
    assert ("DELETE", f"/participant-groups/{group}/participants/", {"participant_ids": ["p1"]}) in (
        standin.app.state.carried_out
    )


def test_groups_messages_and_signed_webhooks(prolific: ProlificClient, standin: RunningStandin) -> None:
    study_id = published(prolific)
    group = prolific.create_participant_group("good raters")
    prolific.add_to_group(group, ["p1", "p2"])
    prolific.add_to_group(group, ["p2"])
    assert standin.app.state.groups[group]["members"] == ["p1", "p2"]
    prolific.send_message("p1", study_id, "Thanks!")
    assert standin.app.state.messages == [{"recipient_id": "p1", "study_id": study_id, "body": "Thanks!"}]
    secret = prolific.new_hook_secret()
    body = json.dumps({"resource_id": "s1", "event_type": "submission.status.change"}).encode()
    signed = wire.signature(secret, "1700000000", body)
    assert wire.signature_valid(secret, "1700000000", body, signed)
    assert not wire.signature_valid(secret, "1700000001", body, signed)
    assert not wire.signature_valid(secret, "1700000000", body + b" ", signed)
    assert not wire.signature_valid("other", "1700000000", body, signed)


def test_a_next_link_to_another_host_never_gets_the_token(standin: RunningStandin) -> None:
    client = ProlificClient(standin.api_url, standin.app.token, backoff=0, sleep=lambda _: None)
    with pytest.raises(RecruitRefused, match="outside"):
        client.call("GET", "https://evil.example/api/v1/studies/")


def test_a_throttled_call_waits_as_long_as_it_is_told(standin: RunningStandin) -> None:
    waited: list[float] = []
    client = ProlificClient(standin.api_url, standin.app.token, backoff=0.25, sleep=waited.append)
    study_id = published(client)
    standin.app.state.faults[:] = [429, 502]
    assert client.get_study(study_id).id == study_id
    assert waited == [2.0, 0.5]  # Retry-After, then the backoff of the second attempt
