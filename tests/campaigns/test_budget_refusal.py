"""`hitforge launch` refuses a campaign whose planned cost exceeds its budget: figures given, nothing done."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy import func, select

from hits.db import session_scope
from hits.requester.tables.campaigns import Campaign, GoldItem, HITSlot, Item, PublishedHIT
from tests.campaigns.test_campaign_file import GOOD, write

REPO = Path(__file__).resolve().parent.parent.parent
STORED = (Campaign, Item, GoldItem, PublishedHIT, HITSlot)


def launch(folder: Path, settings, server_url: str, key) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    """``hitforge launch campaign.yaml`` as a requester runs it, against the test databases and server."""
    return subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "launch", str(folder / "campaign.yaml")],
        cwd=folder,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(REPO),
            "COLUMNS": "200",
            "HITFORGE_VAR_DIR": str(folder / "var"),
            "HITFORGE_DATABASE_URL": settings.database_url,
            "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
            "HITFORGE_PUBLIC_URL": server_url,
            "HITFORGE_MTURK_ACCESS_KEY_ID": key.access_key_id,
            "HITFORGE_MTURK_SECRET_ACCESS_KEY": key.secret_access_key,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


def stored_rows(sessions) -> dict[str, int]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        return {m.__name__: session.scalar(select(func.count()).select_from(m)) or 0 for m in STORED}


def test_a_campaign_over_budget_is_refused_with_the_figures_and_nothing_is_published_or_stored(
    tmp_path, settings, live_server, requester, mturk, requester_sessions
) -> None:
    # 4 items, 2 a HIT: 2 HITs x 3 assignments x (0.10 reward + 0.02 fee) = 0.72.
    campaign = GOOD.replace("name: test-campaign", "name: over-budget").replace(
        'budget: "20.00"', 'budget: "0.71"'
    )
    write(tmp_path, campaign)
    before = stored_rows(requester_sessions)

    refused = launch(tmp_path, settings, live_server.url, requester)

    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "needs 0.72 for 2 HITs x 3 assignments at 0.10 plus fees, but its budget is 0.71" in output
    assert "is running" not in output
    assert mturk.list_hits()["HITs"] == []
    assert stored_rows(requester_sessions) == before
    with session_scope(requester_sessions) as session:
        assert session.scalar(select(Campaign).where(Campaign.name == "over-budget")) is None

    # The same file with a budget of exactly the planned cost launches: the refusal was the budget's.
    write(tmp_path, campaign.replace('budget: "0.71"', 'budget: "0.72"'))
    launched = launch(tmp_path, settings, live_server.url, requester)
    assert launched.returncode == 0, launched.stdout + launched.stderr
    assert "campaign over-budget is running" in launched.stdout
    assert len(mturk.list_hits()["HITs"]) == 2
    with session_scope(requester_sessions) as session:
        stored = session.scalar(select(Campaign).where(Campaign.name == "over-budget"))
        assert stored is not None and stored.status == "running"
