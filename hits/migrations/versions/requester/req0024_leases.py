"""Leases: a duty one process holds at a time across hosts (the beat's scheduling)

Revision ID: req0024
Revises: req0023
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0024"
down_revision = "req0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A new table: nothing existing is copied. No lease held yet: the first beat takes it.
    op.create_table(
        "rq_leases",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("holder", sa.String(length=200), nullable=False),
        sa.Column("expires_at", hits.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("rq_leases")
