"""A partial index of held submissions: the review queue counts them at every request

Revision ID: req0028
Revises: req0027
"""

import sqlalchemy as sa
from alembic import op

revision = "req0028"
down_revision = "req0027"
branch_labels = None
depends_on = None

#: As ``hits.requester.tables.campaigns.HELD_CONDITION`` (a migration keeps its own copy).
HELD_CONDITION = "decision = 'held'"


def upgrade() -> None:
    op.create_index(
        "ix_rq_submissions_held",
        "rq_submissions",
        ["published_hit_id", "worker_id"],
        sqlite_where=sa.text(HELD_CONDITION),
        postgresql_where=sa.text(HELD_CONDITION),
    )


def downgrade() -> None:
    op.drop_index("ix_rq_submissions_held", table_name="rq_submissions")
