"""HIT layouts: stored HTML with placeholders, for CreateHIT's HITLayoutId

Revision ID: mar0011
Revises: mar0010
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "mar0011"
down_revision = "mar0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "market_hit_layouts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("requester_id", sa.String(length=20), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("html", sa.Text(), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["requester_id"], ["market_requesters.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_market_hit_layouts_requester_id", "market_hit_layouts", ["requester_id"])


def downgrade() -> None:
    op.drop_index("ix_market_hit_layouts_requester_id", table_name="market_hit_layouts")
    op.drop_table("market_hit_layouts")
