"""account balances kept beside the ledger

Revision ID: mar0006
Revises: mar0005
"""

import sqlalchemy as sa
from alembic import op

revision = "mar0006"
down_revision = "mar0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "market_account_balances",
        sa.Column("account", sa.String(length=64), nullable=False),
        sa.Column("balance", sa.Numeric(precision=14, scale=2), nullable=False),
        sa.PrimaryKeyConstraint("account"),
    )
    # Existing ledgers: each requester's and worker's balance is the sum of its legs.
    op.execute(
        "INSERT INTO market_account_balances (account, balance) "
        "SELECT account, SUM(amount) FROM market_ledger_entries "
        "WHERE account LIKE 'requester:%' OR account LIKE 'worker:%' GROUP BY account"
    )


def downgrade() -> None:
    op.drop_table("market_account_balances")
