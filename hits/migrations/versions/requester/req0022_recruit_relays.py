"""Recruit relays: bonuses, blocks and messages for recruited participants; a study's block group

Revision ID: req0022
Revises: req0021
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0022"
down_revision = "req0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A new nullable column and a new table: nothing existing is copied.
    with op.batch_alter_table("rq_recruitments") as batch:
        batch.add_column(sa.Column("block_group_id", sa.String(length=64), nullable=True))
    op.create_table(
        "rq_recruit_relays",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("recruitment_id", sa.Integer(), nullable=False),
        sa.Column("outbox_entry_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("participant_id", sa.String(length=64), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("setup_id", sa.String(length=64), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=200), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.Column("sending_at", hits.db.UTCDateTime(), nullable=True),
        sa.Column("applied_at", hits.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["recruitment_id"], ["rq_recruitments.id"]),
        sa.ForeignKeyConstraint(["outbox_entry_id"], ["rq_outbox.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("outbox_entry_id"),
    )
    op.create_index("ix_rq_recruit_relays_recruitment_id", "rq_recruit_relays", ["recruitment_id"])
    op.create_index("ix_rq_recruit_relays_status", "rq_recruit_relays", ["status"])


def downgrade() -> None:
    op.drop_table("rq_recruit_relays")
    with op.batch_alter_table("rq_recruitments") as batch:
        batch.drop_column("block_group_id")
