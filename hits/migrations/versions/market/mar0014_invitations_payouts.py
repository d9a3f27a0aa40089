"""invitation links that grant a qualification; payout addresses, pay-out runs and their payouts

Revision ID: mar0014
Revises: mar0013
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "mar0014"
down_revision = "mar0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "market_invitations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("requester_id", sa.String(length=20), nullable=False),
        sa.Column("qualification_type_id", sa.String(length=32), nullable=False),
        sa.Column("integer_value", sa.Integer(), nullable=False),
        sa.Column("uses_allowed", sa.Integer(), nullable=False),
        sa.Column("uses_count", sa.Integer(), nullable=False),
        sa.Column("expires_at", hits.db.UTCDateTime(), nullable=True),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["requester_id"], ["market_requesters.id"]),
        sa.ForeignKeyConstraint(["qualification_type_id"], ["market_qualification_types.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_market_invitations_requester_id", "market_invitations", ["requester_id"])
    op.create_index(
        "ix_market_invitations_qualification_type_id", "market_invitations", ["qualification_type_id"]
    )
    op.create_table(
        "market_invitation_uses",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("invitation_id", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=20), nullable=False),
        sa.Column("used_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["invitation_id"], ["market_invitations.id"]),
        sa.ForeignKeyConstraint(["worker_id"], ["market_workers.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("invitation_id", "worker_id"),
    )
    op.create_index("ix_market_invitation_uses_invitation_id", "market_invitation_uses", ["invitation_id"])
    op.create_index("ix_market_invitation_uses_worker_id", "market_invitation_uses", ["worker_id"])
    op.create_table(
        "market_payout_addresses",
        sa.Column("worker_id", sa.String(length=20), nullable=False),
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("updated_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["worker_id"], ["market_workers.id"]),
        sa.PrimaryKeyConstraint("worker_id"),
    )
    op.create_table(
        "market_payout_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("minimum", sa.Numeric(14, 2), nullable=False),
        sa.Column("total", sa.Numeric(14, 2), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "market_payouts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=20), nullable=False),
        sa.Column("amount", sa.Numeric(14, 2), nullable=False),
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["market_payout_runs.id"]),
        sa.ForeignKeyConstraint(["worker_id"], ["market_workers.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "worker_id"),
    )
    op.create_index("ix_market_payouts_run_id", "market_payouts", ["run_id"])
    op.create_index("ix_market_payouts_worker_id", "market_payouts", ["worker_id"])


def downgrade() -> None:
    op.drop_index("ix_market_payouts_worker_id", table_name="market_payouts")
    op.drop_index("ix_market_payouts_run_id", table_name="market_payouts")
    op.drop_table("market_payouts")
    op.drop_table("market_payout_runs")
    op.drop_table("market_payout_addresses")
    op.drop_index("ix_market_invitation_uses_worker_id", table_name="market_invitation_uses")
    op.drop_index("ix_market_invitation_uses_invitation_id", table_name="market_invitation_uses")
    op.drop_table("market_invitation_uses")
    op.drop_index("ix_market_invitations_qualification_type_id", table_name="market_invitations")
    op.drop_index("ix_market_invitations_requester_id", table_name="market_invitations")
    op.drop_table("market_invitations")
