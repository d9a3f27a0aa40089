"""Adaptive gold: which HITs are for trusted workers, the trust qualification and its HIT type

Revision ID: req0027
Revises: req0026
"""

import sqlalchemy as sa
from alembic import op

revision = "req0027"
down_revision = "req0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rq_campaigns") as batch:
        batch.add_column(sa.Column("trust_qualification_type_id", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("trusted_hit_type_id", sa.String(length=32), nullable=True))
    with op.batch_alter_table("rq_published_hits") as batch:
        batch.add_column(
            sa.Column("for_trusted", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("rq_published_hits") as batch:
        batch.drop_column("for_trusted")
    with op.batch_alter_table("rq_campaigns") as batch:
        batch.drop_column("trusted_hit_type_id")
        batch.drop_column("trust_qualification_type_id")
