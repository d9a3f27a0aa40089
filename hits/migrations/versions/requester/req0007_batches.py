"""batches: a project layout published over a CSV, one row per HIT

Revision ID: req0007
Revises: req0006
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0007"
down_revision = "req0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rq_batches",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("layout", sa.Text(), nullable=False),
        sa.Column("columns", sa.JSON(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("hit_type_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign_id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "rq_batch_rows",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("inputs", sa.JSON(), nullable=False),
        sa.Column("mturk_hit_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["batch_id"], ["rq_batches.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("batch_id", "position"),
        sa.UniqueConstraint("mturk_hit_id"),
    )
    op.create_index("ix_rq_batch_rows_batch_id", "rq_batch_rows", ["batch_id"])


def downgrade() -> None:
    op.drop_index("ix_rq_batch_rows_batch_id", table_name="rq_batch_rows")
    op.drop_table("rq_batch_rows")
    op.drop_table("rq_batches")
