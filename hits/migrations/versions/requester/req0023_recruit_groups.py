"""Recruit groups: participant groups mirroring a campaign's qualifications on Prolific

Revision ID: req0023
Revises: req0022
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0023"
down_revision = "req0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A new table: nothing existing is copied.
    op.create_table(
        "rq_recruit_groups",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("recruitment_id", sa.Integer(), nullable=False),
        sa.Column("qualification_type_id", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("group_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["recruitment_id"], ["rq_recruitments.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("recruitment_id", "qualification_type_id"),
        sa.UniqueConstraint("name"),
    )
    op.create_index("ix_rq_recruit_groups_recruitment_id", "rq_recruit_groups", ["recruitment_id"])


def downgrade() -> None:
    op.drop_table("rq_recruit_groups")
