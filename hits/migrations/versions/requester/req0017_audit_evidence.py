"""The audit log says which assignments a review decided and what evidence the reviewer saw

Revision ID: req0017
Revises: req0016
"""

import sqlalchemy as sa
from alembic import op

revision = "req0017"
down_revision = "req0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMNs (nullable: rows from before say nothing of either) and an index for
    # browsing the log by reviewer; no batch copy of the table.
    op.add_column("rq_review_actions", sa.Column("assignments", sa.JSON(), nullable=True))
    op.add_column("rq_review_actions", sa.Column("evidence_sha256", sa.String(length=64), nullable=True))
    op.create_index("ix_rq_review_actions_staff_user_id", "rq_review_actions", ["staff_user_id"])


def downgrade() -> None:
    op.drop_index("ix_rq_review_actions_staff_user_id", table_name="rq_review_actions")
    with op.batch_alter_table("rq_review_actions") as batch_op:
        batch_op.drop_column("evidence_sha256")
        batch_op.drop_column("assignments")
