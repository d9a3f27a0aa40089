"""copying pairs: how alike two workers of the same HITs answered, and the latest verdict

Revision ID: req0015
Revises: req0014
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0015"
down_revision = "req0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rq_copying_pairs",
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("first_worker", sa.String(length=20), nullable=False),
        sa.Column("second_worker", sa.String(length=20), nullable=False),
        *(
            sa.Column(name, sa.Integer(), nullable=False)
            for name in (
                "shared_hits",
                "shared_items",
                "identical_answers",
                "shared_texts",
                "identical_texts",
                "identical_wrong_gold",
                "first_ahead",
                "second_ahead",
            )
        ),
        sa.Column("suspicious", sa.Boolean(), nullable=False),
        sa.Column("flagged", sa.Boolean(), nullable=False),
        sa.Column("p_value", sa.Float(), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("updated_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.PrimaryKeyConstraint("campaign_id", "first_worker", "second_worker"),
    )


def downgrade() -> None:
    op.drop_table("rq_copying_pairs")
