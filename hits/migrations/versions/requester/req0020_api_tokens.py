"""API tokens: a dashboard user's scripts call the JSON API as that user

Revision ID: req0020
Revises: req0019
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0020"
down_revision = "req0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A new table only: nothing existing is copied or altered.
    op.create_table(
        "rq_api_tokens",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("staff_user_id", sa.Integer(), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=128), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.Column("last_used_at", hits.db.UTCDateTime(), nullable=True),
        sa.Column("revoked_at", hits.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["staff_user_id"], ["rq_staff_users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_sha256"),
    )
    op.create_index("ix_rq_api_tokens_staff_user_id", "rq_api_tokens", ["staff_user_id"])


def downgrade() -> None:
    op.drop_index("ix_rq_api_tokens_staff_user_id", table_name="rq_api_tokens")
    op.drop_table("rq_api_tokens")
