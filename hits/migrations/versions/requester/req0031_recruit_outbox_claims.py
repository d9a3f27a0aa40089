"""Recruit outbox claims: until when the process applying a place's decision is left to apply it alone

Revision ID: req0031
Revises: req0030
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0031"
down_revision = "req0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN, as req0029 did for rq_outbox: nullable, no copy of the table needed.
    op.add_column("rq_recruit_outbox", sa.Column("claimed_until", hits.db.UTCDateTime(), nullable=True))


def downgrade() -> None:
    op.drop_column("rq_recruit_outbox", "claimed_until")
