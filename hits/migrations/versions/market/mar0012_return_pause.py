"""when an assignment went back to its HIT (returned or abandoned); a worker's accepts paused after too many too fast

Revision ID: mar0012
Revises: mar0011
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "mar0012"
down_revision = "mar0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("market_assignments") as batch:
        batch.add_column(sa.Column("return_time", hits.db.UTCDateTime(), nullable=True))
    with op.batch_alter_table("market_workers") as batch:
        batch.add_column(sa.Column("accepts_paused_until", hits.db.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("market_workers") as batch:
        batch.drop_column("accepts_paused_until")
    with op.batch_alter_table("market_assignments") as batch:
        batch.drop_column("return_time")
