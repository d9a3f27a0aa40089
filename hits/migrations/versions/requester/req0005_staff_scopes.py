"""what a dashboard user may see: the requester account (access key) a requester user
belongs to, and the campaigns assigned to a QA reviewer

Revision ID: req0005
Revises: req0004
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0005"
down_revision = "req0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rq_staff_users") as batch_op:
        batch_op.add_column(sa.Column("access_key_id", sa.String(length=32), nullable=True))
    op.create_table(
        "rq_staff_campaigns",
        sa.Column("staff_user_id", sa.Integer(), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["staff_user_id"], ["rq_staff_users.id"]),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.PrimaryKeyConstraint("staff_user_id", "campaign_id"),
    )
    op.create_index("ix_rq_staff_campaigns_campaign_id", "rq_staff_campaigns", ["campaign_id"])


def downgrade() -> None:
    op.drop_index("ix_rq_staff_campaigns_campaign_id", table_name="rq_staff_campaigns")
    op.drop_table("rq_staff_campaigns")
    with op.batch_alter_table("rq_staff_users") as batch_op:
        batch_op.drop_column("access_key_id")
