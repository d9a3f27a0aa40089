"""Item positions: each item's place in its campaign (from 0, in id order), so that a page of the
items list reads a range of positions whatever its number

Revision ID: req0030
Revises: req0029
"""

import sqlalchemy as sa
from alembic import op

revision = "req0030"
down_revision = "req0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN, not a batch copy: on SQLite the copy drops the old table, which the
    # foreign keys of the HIT slots and chain rounds that name items refuse (as req0016 found).
    # SQLite adds a NOT NULL column only with a default; the backfill below replaces it in every row.
    op.add_column("rq_items", sa.Column("position", sa.Integer(), nullable=False, server_default="0"))
    # Each campaign's items numbered in id order, looked up by id: one pass over the items (a
    # subquery per row that numbered the campaign again would read a campaign once per item).
    op.execute(
        "CREATE TEMPORARY TABLE rq_item_positions "
        "(id INTEGER NOT NULL PRIMARY KEY, position INTEGER NOT NULL)"
    )
    op.execute(
        "INSERT INTO rq_item_positions (id, position) "
        "SELECT id, ROW_NUMBER() OVER (PARTITION BY campaign_id ORDER BY id) - 1 FROM rq_items"
    )
    op.execute(
        "UPDATE rq_items SET position = (SELECT p.position FROM rq_item_positions p WHERE p.id = rq_items.id)"
    )
    op.execute("DROP TABLE rq_item_positions")
    op.create_index("uq_rq_items_campaign_id_position", "rq_items", ["campaign_id", "position"], unique=True)
    if op.get_bind().dialect.name != "sqlite":
        # From here on every insert says its position: one that forgets it fails. (SQLite keeps its
        # default, which only a copy of the table could drop; the unique index refuses a second 0.)
        op.alter_column("rq_items", "position", existing_type=sa.Integer(), server_default=None)


def downgrade() -> None:
    op.drop_index("uq_rq_items_campaign_id_position", table_name="rq_items")
    op.drop_column("rq_items", "position")
