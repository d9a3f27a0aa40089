"""workflow exposures: which worker has been shown which picture (their assignment's page served)

Revision ID: req0013
Revises: req0012
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0013"
down_revision = "req0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rq_workflow_exposures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("workflow_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("worker_id", sa.String(length=20), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["workflow_id"], ["rq_workflows.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("workflow_id", "key", "worker_id"),
    )


def downgrade() -> None:
    op.drop_table("rq_workflow_exposures")
