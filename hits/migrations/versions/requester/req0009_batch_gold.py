"""batch rows point at their published HIT (an item or gold slot) for the review pipeline

Revision ID: req0009
Revises: req0008
"""

import sqlalchemy as sa
from alembic import op

revision = "req0009"
down_revision = "req0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rq_batch_rows") as batch_op:
        batch_op.add_column(sa.Column("published_hit_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_rq_batch_rows_published_hit_id", "rq_published_hits", ["published_hit_id"], ["id"]
        )
        batch_op.create_unique_constraint("uq_rq_batch_rows_published_hit_id", ["published_hit_id"])


def downgrade() -> None:
    with op.batch_alter_table("rq_batch_rows") as batch_op:
        batch_op.drop_constraint("uq_rq_batch_rows_published_hit_id", type_="unique")
        batch_op.drop_constraint("fk_rq_batch_rows_published_hit_id", type_="foreignkey")
        batch_op.drop_column("published_hit_id")
