"""heatmap requests of the heatmap template: each model's heatmap a worker's page asked for, and its outcome

Revision ID: req0010
Revises: req0009
"""

import sqlalchemy as sa
from alembic import op

revision = "req0010"
down_revision = "req0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rq_heatmap_requests",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("assignment_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("call_id", sa.String(length=32), nullable=False),
        sa.Column("round", sa.String(length=8), nullable=False),
        sa.Column("sentence", sa.Integer(), nullable=True),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.Column("model", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("milliseconds", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("rq_heatmap_requests") as batch_op:
        batch_op.create_index("ix_rq_heatmap_requests_assignment", ["campaign_id", "assignment_id", "position"])


def downgrade() -> None:
    op.drop_table("rq_heatmap_requests")
