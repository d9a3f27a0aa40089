"""multi-stage workflows: stages, per-image chains and their refinement rounds

Revision ID: req0011
Revises: req0010
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0011"
down_revision = "req0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rq_workflows",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("budget", sa.Numeric(14, 2), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("access_key_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    with op.batch_alter_table("rq_workflows") as batch_op:
        batch_op.create_index("ix_rq_workflows_access_key_id", ["access_key_id"])
    op.create_table(
        "rq_workflow_stages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("workflow_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["workflow_id"], ["rq_workflows.id"]),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("workflow_id", "name"),
        sa.UniqueConstraint("campaign_id"),
    )
    with op.batch_alter_table("rq_workflow_stages") as batch_op:
        batch_op.create_index("ix_rq_workflow_stages_workflow_id", ["workflow_id"])
    op.create_table(
        "rq_workflow_chains",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stage_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("image", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("stop_reason", sa.Text(), nullable=True),
        sa.Column("seed_text", sa.Text(), nullable=True),
        sa.Column("seed_source", sa.String(length=64), nullable=True),
        sa.Column("exclusion_qualification_id", sa.String(length=32), nullable=True),
        sa.Column("updated_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["stage_id"], ["rq_workflow_stages.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("stage_id", "key"),
    )
    with op.batch_alter_table("rq_workflow_chains") as batch_op:
        batch_op.create_index("ix_rq_workflow_chains_stage_id", ["stage_id"])
    op.create_table(
        "rq_workflow_rounds",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("chain_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("published_hit_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("previous_text", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("worker_id", sa.String(length=20), nullable=True),
        sa.Column("assignment_id", sa.String(length=32), nullable=True),
        sa.Column("work_seconds", sa.Float(), nullable=True),
        sa.Column("metrics", sa.JSON(), nullable=True),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.Column("decided_at", hits.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["chain_id"], ["rq_workflow_chains.id"]),
        sa.ForeignKeyConstraint(["item_id"], ["rq_items.id"]),
        sa.ForeignKeyConstraint(["published_hit_id"], ["rq_published_hits.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("chain_id", "round", "attempt"),
        sa.UniqueConstraint("published_hit_id"),
    )
    with op.batch_alter_table("rq_workflow_rounds") as batch_op:
        batch_op.create_index("ix_rq_workflow_rounds_chain_id", ["chain_id"])
        batch_op.create_index("ix_rq_workflow_rounds_worker_id", ["worker_id"])


def downgrade() -> None:
    op.drop_table("rq_workflow_rounds")
    op.drop_table("rq_workflow_chains")
    op.drop_table("rq_workflow_stages")
    op.drop_table("rq_workflows")
