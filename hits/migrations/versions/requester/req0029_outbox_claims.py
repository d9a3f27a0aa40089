"""Outbox claims: until when the task applying an entry is left to apply it alone

Revision ID: req0029
Revises: req0028
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0029"
down_revision = "req0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN (a batch copy of the outbox would be refused by nothing here, but is slow
    # on a long outbox and needless for a nullable column).
    op.add_column("rq_outbox", sa.Column("claimed_until", hits.db.UTCDateTime(), nullable=True))


def downgrade() -> None:
    op.drop_column("rq_outbox", "claimed_until")
