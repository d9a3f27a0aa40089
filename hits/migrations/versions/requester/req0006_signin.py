"""a staff user's session generation (signing out ends every cookie issued before); failed
dashboard sign-ins

Revision ID: req0006
Revises: req0005
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0006"
down_revision = "req0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rq_staff_users") as batch:
        batch.add_column(sa.Column("session_generation", sa.Integer(), server_default="0", nullable=False))
    op.create_table(
        "rq_staff_signin_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(length=160), nullable=False),
        sa.Column("failed_at", hits.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_rq_staff_signin_failures_key_failed_at", "rq_staff_signin_failures", ["key", "failed_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_rq_staff_signin_failures_key_failed_at", table_name="rq_staff_signin_failures")
    op.drop_table("rq_staff_signin_failures")
    with op.batch_alter_table("rq_staff_users") as batch:
        batch.drop_column("session_generation")
