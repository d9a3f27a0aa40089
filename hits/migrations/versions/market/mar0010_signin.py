"""a worker's session generation (signing out ends every cookie issued before); failed sign-ins

Revision ID: mar0010
Revises: mar0009
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "mar0010"
down_revision = "mar0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("market_workers") as batch:
        batch.add_column(sa.Column("session_generation", sa.Integer(), server_default="0", nullable=False))
    op.create_table(
        "market_signin_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(length=160), nullable=False),
        sa.Column("failed_at", hits.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_market_signin_failures_key_failed_at", "market_signin_failures", ["key", "failed_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_market_signin_failures_key_failed_at", table_name="market_signin_failures")
    op.drop_table("market_signin_failures")
    with op.batch_alter_table("market_workers") as batch:
        batch.drop_column("session_generation")
