"""gold exposures per assignment; a campaign's soft-block qualification; HIT sync bookkeeping

Revision ID: req0003
Revises: req0002
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0003"
down_revision = "req0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rq_gold_exposures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=20), nullable=False),
        sa.Column("assignment_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("gold_item_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.ForeignKeyConstraint(["gold_item_id"], ["rq_gold_items.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign_id", "assignment_id", "position"),
    )
    with op.batch_alter_table("rq_gold_exposures") as batch_op:
        batch_op.create_index("ix_rq_gold_exposures_assignment_id", ["assignment_id"])
        batch_op.create_index("ix_rq_gold_exposures_campaign_worker", ["campaign_id", "worker_id"])
    with op.batch_alter_table("rq_campaigns") as batch_op:
        batch_op.add_column(sa.Column("block_qualification_type_id", sa.String(length=32), nullable=True))
    with op.batch_alter_table("rq_published_hits") as batch_op:
        batch_op.add_column(sa.Column("sync_queued_at", hits.db.UTCDateTime(), nullable=True))
    with op.batch_alter_table("rq_outbox") as batch_op:
        batch_op.add_column(sa.Column("queued_at", hits.db.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rq_outbox") as batch_op:
        batch_op.drop_column("queued_at")
    with op.batch_alter_table("rq_published_hits") as batch_op:
        batch_op.drop_column("sync_queued_at")
    with op.batch_alter_table("rq_campaigns") as batch_op:
        batch_op.drop_column("block_qualification_type_id")
    op.drop_table("rq_gold_exposures")
