"""Migration req0016: page tokens move from workflow rounds to their HIT rows.

A round's HIT was created with its token in its URL, so the token must reach
the HIT row unchanged; a campaign HIT not on the marketplace yet (a launch to
resume) gets a token of its own; one already published keeps none (its plain
URL is what the marketplace has, and its recorded id finds it).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa
from alembic import command

from hits.schema import alembic_config
from tests.conftest import BACKEND, _postgres_database

BEFORE = "req0015"
ROUND_TOKEN = "ab" * 16


def _database(folder: Path) -> str:
    return _postgres_database() if BACKEND == "postgres" else f"sqlite:///{folder / 'requester.sqlite'}"


def _rows_before(engine: sa.Engine) -> dict[str, int]:
    """A workflow round's HIT (published, with its round's token) and a campaign's two HITs, one published."""
    now = datetime.now(UTC)
    tables = sa.MetaData()
    tables.reflect(engine)

    def add(connection: sa.Connection, table: str, **values: object) -> int:
        return int(
            connection.execute(sa.insert(tables.tables[table]).values(**values)).inserted_primary_key[0]
        )

    with engine.begin() as connection:
        campaign = add(
            connection,
            "rq_campaigns",
            name="c",
            template="refine",
            spec={},
            status="running",
            budget=5,
            created_at=now,
        )
        rows = {
            name: add(
                connection,
                "rq_published_hits",
                campaign_id=campaign,
                status=status,
                created_at=now,
                mturk_hit_id=hit,
            )
            for name, status, hit in (
                ("round", "open", "HROUND"),
                ("published", "open", "HPUB"),
                ("pending", "pending", None),
            )
        }
        workflow = add(
            connection, "rq_workflows", name="w", spec={}, budget=5, status="running", created_at=now
        )
        stage = add(
            connection,
            "rq_workflow_stages",
            workflow_id=workflow,
            name="s",
            position=0,
            campaign_id=campaign,
            source="items",
            kind="rounds",
        )
        chain = add(
            connection,
            "rq_workflow_chains",
            stage_id=stage,
            key="k",
            image={},
            status="running",
            updated_at=now,
        )
        item = add(connection, "rq_items", campaign_id=campaign, external_id="k#r1.1", payload={})
        add(
            connection,
            "rq_workflow_rounds",
            chain_id=chain,
            round=1,
            attempt=1,
            item_id=item,
            published_hit_id=rows["round"],
            status="open",
            previous_text="A picture.",
            created_at=now,
            page_token=ROUND_TOKEN,
        )
    return rows


def test_round_tokens_move_to_their_hit_rows_and_unpublished_rows_get_one(tmp_path: Path) -> None:
    url = _database(tmp_path)
    config = alembic_config("requester", url)
    command.upgrade(config, BEFORE)
    engine = sa.create_engine(url)
    try:
        rows = _rows_before(engine)
        command.upgrade(config, "requester@heads")
        with engine.connect() as connection:
            found = connection.execute(sa.text("SELECT id, page_token FROM rq_published_hits"))
            tokens = {row_id: token for row_id, token in found}
        assert tokens[rows["round"]] == ROUND_TOKEN
        assert tokens[rows["published"]] is None
        assert re.fullmatch(r"[0-9a-f]{32}", str(tokens[rows["pending"]]))
        assert "page_token" not in {c["name"] for c in sa.inspect(engine).get_columns("rq_workflow_rounds")}

        command.downgrade(config, BEFORE)
        with engine.connect() as connection:
            back = connection.execute(sa.text("SELECT page_token FROM rq_workflow_rounds")).scalars().all()
        assert back == [ROUND_TOKEN]
        assert "page_token" not in {c["name"] for c in sa.inspect(engine).get_columns("rq_published_hits")}
    finally:
        engine.dispose()
