"""notification events outbox; review policies and their results

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
    op.create_table(
        "market_review_policies",
        sa.Column("hit_id", sa.String(length=32), nullable=False),
        sa.Column("assignment_policy", sa.JSON(), nullable=True),
        sa.Column("hit_policy", sa.JSON(), nullable=True),
        sa.Column("hit_policy_done_at", hits.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["hit_id"], ["market_hits.id"]),
        sa.PrimaryKeyConstraint("hit_id"),
    )
    op.create_table(
        "market_review_records",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("hit_id", sa.String(length=32), nullable=False),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["hit_id"], ["market_hits.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("market_review_records") as batch_op:
        batch_op.create_index("ix_market_review_records_hit_id", ["hit_id"])


def downgrade() -> None:
    op.drop_table("market_review_records")
    op.drop_table("market_review_policies")
    op.drop_table("market_events")
