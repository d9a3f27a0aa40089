"""HIT page tokens on every published HIT row (campaign HITs too), no longer on workflow rounds

Revision ID: req0016
Revises: req0015
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "req0016"
down_revision = "req0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN and a unique index, not a batch copy of the table: on SQLite that copy
    # drops the old table, which the foreign keys of its slots and submissions refuse.
    op.add_column("rq_published_hits", sa.Column("page_token", sa.String(length=32), nullable=True))
    op.create_index("ix_rq_published_hits_page_token", "rq_published_hits", ["page_token"], unique=True)
    # A round's HIT already carries its token in its URL: the token moves with it, unchanged.
    op.execute(
        "UPDATE rq_published_hits SET page_token = (SELECT r.page_token FROM rq_workflow_rounds r "
        "WHERE r.published_hit_id = rq_published_hits.id) "
        "WHERE id IN (SELECT published_hit_id FROM rq_workflow_rounds WHERE page_token IS NOT NULL)"
    )
    # Rows not on the marketplace yet (a launch to resume) get one now; published HITs keep
    # the plain URL they were created with, and their recorded id finds them.
    bind = op.get_bind()
    unpublished = bind.execute(
        sa.text("SELECT id FROM rq_published_hits WHERE mturk_hit_id IS NULL AND page_token IS NULL")
    ).scalars()
    for row_id in list(unpublished):
        bind.execute(
            sa.text("UPDATE rq_published_hits SET page_token = :token WHERE id = :id"),
            {"token": secrets.token_hex(16), "id": row_id},
        )
    with op.batch_alter_table("rq_workflow_rounds") as batch_op:
        batch_op.drop_constraint("uq_rq_workflow_rounds_page_token", type_="unique")
        batch_op.drop_column("page_token")


def downgrade() -> None:
    with op.batch_alter_table("rq_workflow_rounds") as batch_op:
        batch_op.add_column(sa.Column("page_token", sa.String(length=32), nullable=True))
        batch_op.create_unique_constraint("uq_rq_workflow_rounds_page_token", ["page_token"])
    op.execute(
        "UPDATE rq_workflow_rounds SET page_token = (SELECT p.page_token FROM rq_published_hits p "
        "WHERE p.id = rq_workflow_rounds.published_hit_id)"
    )
    op.drop_index("ix_rq_published_hits_page_token", table_name="rq_published_hits")
    op.drop_column("rq_published_hits", "page_token")
