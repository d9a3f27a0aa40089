"""a campaign's aggregated labels and agreement, stored when it finishes; room for an
assignment id in a review action

Revision ID: req0004
Revises: req0003
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0004"
down_revision = "req0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rq_campaign_results",
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("method", sa.String(length=32), nullable=False),
        sa.Column("agreement", sa.Float(), nullable=True),
        sa.Column("labels", sa.JSON(), nullable=False),
        sa.Column("assignments", sa.Integer(), nullable=False),
        sa.Column("computed_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.PrimaryKeyConstraint("campaign_id"),
    )
    # "approve <assignment id>" is 38 characters (PostgreSQL refused it at 32).
    with op.batch_alter_table("rq_review_actions") as batch_op:
        batch_op.alter_column(
            "action", existing_type=sa.String(length=32), type_=sa.String(length=64), existing_nullable=False
        )


def downgrade() -> None:
    with op.batch_alter_table("rq_review_actions") as batch_op:
        batch_op.alter_column(
            "action", existing_type=sa.String(length=64), type_=sa.String(length=32), existing_nullable=False
        )
    op.drop_table("rq_campaign_results")
