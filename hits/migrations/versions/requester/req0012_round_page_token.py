"""workflow rounds: a random page token in each round's ExternalQuestion URL

Revision ID: req0012
Revises: req0011
"""

import sqlalchemy as sa
from alembic import op

revision = "req0012"
down_revision = "req0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Rounds made before this have none: their HITs were published with the plain page URL.
    with op.batch_alter_table("rq_workflow_rounds") as batch_op:
        batch_op.add_column(sa.Column("page_token", sa.String(length=32), nullable=True))
        batch_op.create_unique_constraint("uq_rq_workflow_rounds_page_token", ["page_token"])


def downgrade() -> None:
    with op.batch_alter_table("rq_workflow_rounds") as batch_op:
        batch_op.drop_constraint("uq_rq_workflow_rounds_page_token", type_="unique")
        batch_op.drop_column("page_token")
