"""spot checks: approved assignments drawn for a person to look at again, and their verdicts

Revision ID: req0019
Revises: req0018
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0019"
down_revision = "req0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A new table only: nothing existing is copied or altered.
    op.create_table(
        "rq_spot_checks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=20), nullable=False),
        sa.Column("assignment_id", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("staff_user_id", sa.Integer(), nullable=True),
        sa.Column("checked_at", hits.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.ForeignKeyConstraint(["staff_user_id"], ["rq_staff_users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("assignment_id"),
    )
    op.create_index("ix_rq_spot_checks_campaign_worker", "rq_spot_checks", ["campaign_id", "worker_id"])


def downgrade() -> None:
    op.drop_index("ix_rq_spot_checks_campaign_worker", table_name="rq_spot_checks")
    op.drop_table("rq_spot_checks")
