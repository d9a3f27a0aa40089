"""notification events outbox

Revision ID: mar0005
Revises: mar0002
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "mar0005"
down_revision = "mar0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "market_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("requester_id", sa.String(length=20), nullable=False),
        sa.Column("hit_type_id", sa.String(length=32), nullable=False),
        sa.Column("event_type", sa.String(length=32), nullable=False),
        sa.Column("destination", sa.String(length=1000), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.Column("claimed_at", hits.db.UTCDateTime(), nullable=True),
        sa.Column("delivered_at", hits.db.UTCDateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["requester_id"], ["market_requesters.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("market_events") as batch_op:
        batch_op.create_index("ix_market_events_requester_id", ["requester_id"])
        batch_op.create_index("ix_market_events_delivered_at", ["delivered_at"])


def downgrade() -> None:
    op.drop_table("market_events")
