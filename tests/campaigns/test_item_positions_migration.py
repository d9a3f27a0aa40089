"""Migration req0030: an upgraded database's items are numbered from 0 in each campaign, in id order."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import exc, insert, inspect, select

from hits.db import make_engine
from hits.requester.tables.campaigns import Campaign, Item
from hits.schema import alembic_config, upgrade_side
from tests.conftest import BACKEND, _postgres_database

BEFORE = "req0029"


def _positions(url: str) -> dict[int, list[tuple[int, str]]]:
    """Each campaign's items as (position, external id), in id order."""
    engine = make_engine(url)
    out: dict[int, list[tuple[int, str]]] = {}
    with engine.connect() as connection:
        for campaign_id, position, external_id in connection.execute(
            select(Item.campaign_id, Item.position, Item.external_id).order_by(Item.id)
        ):
            out.setdefault(campaign_id, []).append((position, external_id))
    engine.dispose()
    return out


def test_the_migration_numbers_each_campaigns_items_densely_in_id_order(tmp_path: Path) -> None:
    url = _postgres_database() if BACKEND == "postgres" else f"sqlite:///{tmp_path / 'requester.sqlite'}"
    config = alembic_config("requester", url)
    command.upgrade(config, BEFORE)
    engine = make_engine(url)
    # Written through Core as rows of the older version, with no position; three campaigns' items
    # added in turns (their ids interleave), and a campaign with none.
    with engine.begin() as connection:
        ids: list[int] = [
            connection.execute(
                insert(Campaign)
                .values(name=name, template="rating", spec={}, budget=Decimal("5"))
                .returning(Campaign.id)
            ).scalar_one()
            for name in ("older-a", "older-b", "older-c", "older-empty")
        ]
        for batch in range(4):
            for campaign_id, size in zip(ids[:3], (3, 2, 1), strict=True):
                connection.execute(
                    insert(Item),
                    [
                        {"campaign_id": campaign_id, "external_id": f"b{batch}-{n}", "payload": {}}
                        for n in range(size)
                    ],
                )
    engine.dispose()
    upgrade_side("requester", url)
    numbered = _positions(url)
    assert set(numbered) == set(ids[:3])
    for campaign_id, size in zip(ids[:3], (3, 2, 1), strict=True):
        assert numbered[campaign_id] == [
            (n, f"b{batch}-{k}") for n, (batch, k) in enumerate((b, k) for b in range(4) for k in range(size))
        ]
    engine = make_engine(url)
    indexes = {i["name"]: i for i in inspect(engine).get_indexes("rq_items")}
    assert indexes["uq_rq_items_campaign_id_position"]["unique"]
    assert indexes["uq_rq_items_campaign_id_position"]["column_names"] == ["campaign_id", "position"]
    # From now on an insert says its position: one that does not is refused (on PostgreSQL for
    # the missing value; SQLite keeps the column's default of 0, which the campaign's first item has).
    with pytest.raises(exc.IntegrityError), engine.begin() as connection:
        connection.execute(insert(Item).values(campaign_id=ids[0], external_id="late", payload={}))
    with engine.begin() as connection:
        connection.execute(
            insert(Item).values(campaign_id=ids[3], position=0, external_id="first", payload={})
        )
    engine.dispose()

    # Down and up again: the column goes, and comes back numbered the same.
    command.downgrade(config, BEFORE)
    engine = make_engine(url)
    columns = {c["name"] for c in inspect(engine).get_columns("rq_items")}
    assert "position" not in columns and "external_id" in columns
    assert "uq_rq_items_campaign_id_position" not in {
        i["name"] for i in inspect(engine).get_indexes("rq_items")
    }
    engine.dispose()
    upgrade_side("requester", url)
    again = _positions(url)
    assert {k: v for k, v in again.items() if k != ids[3]} == numbered
    assert again[ids[3]] == [(0, "first")]
