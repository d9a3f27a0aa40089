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
    # Plain ADD COLUMNs, not batch copies: on SQLite a copy drops the old table, which the
    # foreign keys of the campaigns' and HITs' other rows refuse (as req0016 found).
    op.add_column("rq_campaigns", sa.Column("trust_qualification_type_id", sa.String(length=32), nullable=True))
    op.add_column("rq_campaigns", sa.Column("trusted_hit_type_id", sa.String(length=32), nullable=True))
    op.add_column(
        "rq_published_hits", sa.Column("for_trusted", sa.Boolean(), nullable=False, server_default=sa.false())
    )


def downgrade() -> None:
    op.drop_column("rq_published_hits", "for_trusted")
    op.drop_column("rq_campaigns", "trusted_hit_type_id")
    op.drop_column("rq_campaigns", "trust_qualification_type_id")
