"""Drop rq_items' single-column campaign index: the (campaign, id) and (campaign, position) indexes lead with it

Revision ID: req0032
Revises: req0031
"""

import sqlalchemy as sa
from alembic import op

revision = "req0032"
down_revision = "req0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Every read by campaign is served by ix_rq_items_campaign_id_id or uq_rq_items_campaign_id_position
    # (both start with campaign_id, as does the foreign key's check); this one only cost each insert.
    op.drop_index("ix_rq_items_campaign_id", table_name="rq_items")


def downgrade() -> None:
    op.create_index("ix_rq_items_campaign_id", "rq_items", [sa.column("campaign_id")], unique=False)
