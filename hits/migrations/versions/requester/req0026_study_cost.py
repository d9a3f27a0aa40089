"""Recruitments: what the study's rewards and Prolific's fees count in the budget; a partial-payment code

Revision ID: req0026
Revises: req0025
"""

import sqlalchemy as sa
from alembic import op

revision = "req0026"
down_revision = "req0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable: studies launched before this were never counted, and are not counted now either
    # (their cost was never checked against the budget; docs/recruiting.md says so).
    with op.batch_alter_table("rq_recruitments") as batch:
        batch.add_column(sa.Column("study_cost", sa.Numeric(precision=12, scale=2), nullable=True))
        batch.add_column(sa.Column("partial_code", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rq_recruitments") as batch:
        batch.drop_column("partial_code")
        batch.drop_column("study_cost")
