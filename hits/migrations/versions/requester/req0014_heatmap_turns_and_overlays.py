"""heatmap requests take numbered turns, unique per slot and model (the per-image limits hold under races);
each heatmap shown keeps its overlay (a reloaded page shows it again); campaign results keep a
template's agreement per part

Revision ID: req0014
Revises: req0013
"""

import sqlalchemy as sa
from alembic import op

revision = "req0014"
down_revision = "req0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rq_heatmap_requests") as batch_op:
        # Rows logged before have no turn (NULLs never collide); the next request's turn is the count.
        batch_op.add_column(sa.Column("number", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("overlay", sa.LargeBinary(), nullable=True))
        batch_op.create_index(
            "uq_rq_heatmap_requests_turn",
            ["campaign_id", "assignment_id", "position", "number", "model"],
            unique=True,
        )
    with op.batch_alter_table("rq_campaign_results") as batch_op:
        batch_op.add_column(sa.Column("agreement_parts", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rq_campaign_results") as batch_op:
        batch_op.drop_column("agreement_parts")
    with op.batch_alter_table("rq_heatmap_requests") as batch_op:
        batch_op.drop_index("uq_rq_heatmap_requests_turn")
        batch_op.drop_column("overlay")
        batch_op.drop_column("number")
