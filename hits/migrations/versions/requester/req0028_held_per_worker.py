"""Held submissions per worker, kept as they change: the review queue reads a row a worker

Revision ID: req0028
Revises: req0027
"""

import sqlalchemy as sa
from alembic import op

revision = "req0028"
down_revision = "req0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rq_campaign_worker_held",
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=20), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("campaign_id", "worker_id"),
    )
    # What the database holds now, counted once; from here on every commit keeps it
    # (``hits.requester.tables.counters``).
    op.execute(
        "INSERT INTO rq_campaign_worker_held (campaign_id, worker_id, n) "
        "SELECT h.campaign_id, s.worker_id, COUNT(*) FROM rq_submissions s "
        "JOIN rq_published_hits h ON h.id = s.published_hit_id "
        "WHERE s.decision = 'held' GROUP BY h.campaign_id, s.worker_id"
    )


def downgrade() -> None:
    op.drop_table("rq_campaign_worker_held")
