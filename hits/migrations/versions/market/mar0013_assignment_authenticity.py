"""an assignment keeps its page's typing record (counts only) beside its answer

Revision ID: mar0013
Revises: mar0012
"""

import sqlalchemy as sa
from alembic import op

revision = "mar0013"
down_revision = "mar0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain nullable column: assignments from before sent no record, which is no signal.
    op.add_column("market_assignments", sa.Column("authenticity", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("market_assignments") as batch:
        batch.drop_column("authenticity")
