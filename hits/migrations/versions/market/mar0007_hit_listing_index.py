"""an index that serves a requester's HITs of one status in listing order

Revision ID: mar0007
Revises: mar0006
"""

from alembic import op

revision = "mar0007"
down_revision = "mar0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # ListReviewableHITs pages by (created_at, id) after the last key seen: with
    # this index a page reads its own rows only, however deep it is.
    op.create_index(
        "ix_market_hits_listing", "market_hits", ["requester_id", "status", "created_at", "id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_market_hits_listing", table_name="market_hits")
