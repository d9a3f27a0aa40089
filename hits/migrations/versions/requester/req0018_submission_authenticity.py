"""Submissions keep the typing record their page sent (counts of keystrokes, pastes, focus loss)

Revision ID: req0018
Revises: req0017
"""

import sqlalchemy as sa
from alembic import op

revision = "req0018"
down_revision = "req0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain nullable ADD COLUMN: submissions from before sent no record, which is no signal.
    op.add_column("rq_submissions", sa.Column("authenticity", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rq_submissions") as batch_op:
        batch_op.drop_column("authenticity")
