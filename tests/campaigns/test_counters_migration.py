"""Upgrading a database that holds campaigns fills their counters: the page shows right figures at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from alembic import command
from sqlalchemy import insert, select

from hits.db import make_engine, make_session_factory
from hits.requester.tables.campaigns import Campaign, Item, PublishedHIT, Submission
from hits.schema import alembic_config, upgrade_side
from tests.campaigns.test_campaign_counters import kept_and_recounted
from tests.conftest import BACKEND, _postgres_database

BEFORE = "req0024"


def test_the_migration_counts_what_an_upgraded_database_holds(tmp_path: Path) -> None:
    url = _postgres_database() if BACKEND == "postgres" else f"sqlite:///{tmp_path / 'requester.sqlite'}"
    command.upgrade(alembic_config("requester", url), BEFORE)
    engine = make_engine(url)
    start = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    # Written through Core, as rows of an older version are: no session counts them.
    with engine.begin() as connection:
        ids = []
        for name in ("older-a", "older-b"):
            ids.append(
                connection.scalar(
                    insert(Campaign)
                    .values(name=name, template="rating", spec={}, budget=Decimal("5"))
                    .returning(Campaign.id)
                )
            )
        for campaign_id in ids:
            connection.execute(
                insert(Item),
                [{"campaign_id": campaign_id, "external_id": f"i{n}", "payload": {}} for n in range(5)],
            )
            for h in range(3):
                hit = connection.scalar(
                    insert(PublishedHIT)
                    .values(campaign_id=campaign_id, status=("open", "complete")[h % 2])
                    .returning(PublishedHIT.id)
                )
                connection.execute(
                    insert(Submission),
                    [
                        {
                            "assignment_id": f"3M{campaign_id}{h}{k}",
                            "published_hit_id": hit,
                            "worker_id": f"AW{k}",
                            "answers": {},
                            "decision": (None, "approve", "reject", "held")[(h + k) % 4],
                            # Minutes apart across three hours; one never confirmed its time.
                            "submitted_at": None if k == 3 else start + timedelta(minutes=47 * h + 13 * k),
                        }
                        for k in range(4)
                    ],
                )
    upgrade_side("requester", url)
    sessions = make_session_factory(engine)
    for campaign_id in ids:
        kept, recounted = kept_and_recounted(sessions, campaign_id)
        assert kept == recounted
        assert kept[0] == [(campaign_id, 5)] and sum(n for *_, n in kept[2]) == 12
        assert sum(n for *_, n in kept[3]) == 9 and len(kept[3]) == 3
    with sessions() as session:
        assert session.scalar(select(Campaign.id).where(Campaign.name == "older-a")) == ids[0]
    engine.dispose()
