"""indexes for the worker path: a group's open HITs oldest first, and the clocks' sweeps

Revision ID: mar0009
Revises: mar0008
"""

from alembic import op

revision = "mar0009"
down_revision = "mar0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A group's Accept takes its oldest open HIT, and the HIT list asks each group
    # whether it has one, its newest and how many (up to a cap): with this index
    # each is a short range read of the group's own open HITs, however many
    # HITs the marketplace holds.
    op.create_index(
        "ix_market_hits_group_queue", "market_hits", ["hit_type_id", "status", "created_at", "id"], unique=False
    )
    # The clocks look for open HITs past their expiry and for work past its
    # deadline or auto-approval time, every few seconds: a range read, not a
    # walk through every Assignable HIT or Submitted assignment. Expiry alone,
    # not (status, expires_at): SQLite's planner, given that pair, used it for
    # "open and not yet expired" too and sorted the whole group to find its oldest.
    op.create_index("ix_market_hits_expiry", "market_hits", ["expires_at"], unique=False)
    op.create_index("ix_market_assignments_deadline", "market_assignments", ["status", "deadline"], unique=False)
    op.create_index(
        "ix_market_assignments_auto_approval", "market_assignments", ["status", "auto_approval_time"], unique=False
    )
    # What a worker holds (the HIT list and Accept leave those HITs out).
    op.create_index("ix_market_assignments_worker_status", "market_assignments", ["worker_id", "status"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_market_assignments_worker_status", table_name="market_assignments")
    op.drop_index("ix_market_assignments_auto_approval", table_name="market_assignments")
    op.drop_index("ix_market_assignments_deadline", table_name="market_assignments")
    op.drop_index("ix_market_hits_expiry", table_name="market_hits")
    op.drop_index("ix_market_hits_group_queue", table_name="market_hits")
