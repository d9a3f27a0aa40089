"""campaign counters: items, HITs by status, submissions by decision and by hour, kept as they change; indexes for the items list

Revision ID: req0025
Revises: req0024
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0025"
down_revision = "req0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # No foreign keys to the campaign: inserting a counter row must not take a lock on the
    # campaign's row (see hits/requester/tables/counters.py).
    op.create_table(
        "rq_campaign_item_counts",
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("campaign_id"),
    )
    op.create_table(
        "rq_campaign_hit_counts",
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("campaign_id", "status"),
    )
    op.create_table(
        "rq_campaign_decision_counts",
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("campaign_id", "decision"),
    )
    op.create_table(
        "rq_campaign_hourly_submissions",
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("hour", hits.db.UTCDateTime(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("campaign_id", "hour"),
    )
    # The items list: an item's answers found through its slots, and a page of a campaign's items
    # in id order read from the index alone.
    op.create_index("ix_rq_hit_slots_item_id", "rq_hit_slots", ["item_id"])
    op.create_index("ix_rq_items_campaign_id_id", "rq_items", ["campaign_id", "id"])
    # What a campaign paid beyond its assignments (bonuses, re-posts), without reading every
    # decision it queued: the campaign page's money and every budget check.
    op.create_index("ix_rq_outbox_campaign_action", "rq_outbox", ["campaign_id", "action"])
    _backfill()


def _backfill() -> None:
    """Count what an upgraded database holds already; from here on each commit adds its own changes."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        hour = "date_trunc('hour', s.submitted_at)"
    else:
        # The text form SQLAlchemy stores SQLite's timestamps in, truncated to the hour.
        hour = "strftime('%Y-%m-%d %H:00:00.000000', s.submitted_at)"
    op.execute(
        "INSERT INTO rq_campaign_item_counts (campaign_id, n) "
        "SELECT campaign_id, count(*) FROM rq_items GROUP BY campaign_id"
    )
    op.execute(
        "INSERT INTO rq_campaign_hit_counts (campaign_id, status, n) "
        "SELECT campaign_id, status, count(*) FROM rq_published_hits GROUP BY campaign_id, status"
    )
    op.execute(
        "INSERT INTO rq_campaign_decision_counts (campaign_id, decision, n) "
        "SELECT h.campaign_id, coalesce(s.decision, ''), count(*) "
        "FROM rq_submissions s JOIN rq_published_hits h ON h.id = s.published_hit_id "
        "GROUP BY h.campaign_id, coalesce(s.decision, '')"
    )
    op.execute(
        "INSERT INTO rq_campaign_hourly_submissions (campaign_id, hour, n) "
        f"SELECT h.campaign_id, {hour}, count(*) "
        "FROM rq_submissions s JOIN rq_published_hits h ON h.id = s.published_hit_id "
        f"WHERE s.submitted_at IS NOT NULL GROUP BY h.campaign_id, {hour}"
    )


def downgrade() -> None:
    op.drop_index("ix_rq_outbox_campaign_action", table_name="rq_outbox")
    op.drop_index("ix_rq_items_campaign_id_id", table_name="rq_items")
    op.drop_index("ix_rq_hit_slots_item_id", table_name="rq_hit_slots")
    op.drop_table("rq_campaign_hourly_submissions")
    op.drop_table("rq_campaign_decision_counts")
    op.drop_table("rq_campaign_hit_counts")
    op.drop_table("rq_campaign_item_counts")
