"""A person opens an invitation link in a real browser, signs up, and sets where they are paid."""

from __future__ import annotations

import uuid

import pytest

from hits.db import session_scope
from hits.market import invitations
from tests.browser.accessibility import assert_accessible_copy

pytestmark = pytest.mark.browser


def test_an_invited_person_signs_up_and_sets_a_payout_address(
    page, live_server, mturk, requester, market_sessions
) -> None:  # type: ignore[no-untyped-def]
    qtype = mturk.create_qualification_type(
        Name=f"Panel {uuid.uuid4().hex[:8]}", Description="Our panel.", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    with session_scope(market_sessions) as session:
        token = invitations.create_invitations(session, requester.requester_id, qtype)[0].token
    page.goto(invitations.link(live_server.url, token))
    assert "This invitation grants the qualification" in page.inner_text("#invitation-grants")
    assert_accessible_copy(page, "the invitation page")
    username = f"panelist-{uuid.uuid4().hex[:6]}"
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password (at least 8 characters)").fill("a-long-password")
    page.get_by_role("button", name="Sign up and accept").click()
    page.wait_for_url("**/me")
    assert f"Signed in as {username}" in page.inner_text("nav")
    page.get_by_role("link", name="Statement by year, pay-outs and where you are paid").click()
    page.wait_for_url("**/me/earnings")
    assert page.inner_text("#statement-owed") == "$0.00"
    page.get_by_label("E-mail address or mobile phone number", exact=False).fill("=1+1")
    page.get_by_role("button", name="Save").click()
    assert "e-mail address or mobile phone number" in page.inner_text("[role=alert]")
    page.get_by_label("E-mail address or mobile phone number", exact=False).fill("panel@example.org")
    page.get_by_role("button", name="Save").click()
    page.wait_for_url("**/me/earnings")
    assert "panel@example.org" in page.inner_text("#payout-address")
    assert_accessible_copy(page, "the worker's statement and payout address")
    # The link is used now: opening it again, signed out, says so.
    fresh = page.context.browser.new_context().new_page()  # type: ignore[union-attr]
    fresh.goto(invitations.link(live_server.url, token))
    assert "already been used" in fresh.inner_text("#invitation-refused")
    fresh.context.close()
