"""per-assignment arrangements of a slot (which description is on the left in a blinded side by side)

Revision ID: req0008
Revises: req0007
"""

import sqlalchemy as sa
from alembic import op

revision = "req0008"
down_revision = "req0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rq_slot_arrangements",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("assignment_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("arrangement", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign_id", "assignment_id", "position"),
    )
    with op.batch_alter_table("rq_slot_arrangements") as batch_op:
        batch_op.create_index("ix_rq_slot_arrangements_assignment_id", ["assignment_id"])


def downgrade() -> None:
    op.drop_table("rq_slot_arrangements")
