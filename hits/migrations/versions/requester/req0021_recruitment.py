"""Recruitment: a campaign's study on Prolific, its places, their assignments and decisions

Revision ID: req0021
Revises: req0020
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "req0021"
down_revision = "req0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # New tables only: nothing existing is copied or altered.
    op.create_table(
        "rq_recruitments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("internal_name", sa.String(length=64), nullable=False),
        sa.Column("study_id", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("completion_code", sa.String(length=32), nullable=False),
        sa.Column("return_code", sa.String(length=32), nullable=False),
        sa.Column("places", sa.Integer(), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.Column("published_at", hits.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["campaign_id"], ["rq_campaigns.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("campaign_id"),
        sa.UniqueConstraint("internal_name"),
        sa.UniqueConstraint("study_id"),
    )
    op.create_table(
        "rq_recruit_places",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("recruitment_id", sa.Integer(), nullable=False),
        sa.Column("participant_id", sa.String(length=64), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("worker_id", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("platform_status", sa.String(length=32), nullable=True),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.Column("finished_at", hits.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["recruitment_id"], ["rq_recruitments.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("session_id"),
    )
    op.create_index("ix_rq_recruit_places_recruitment_id", "rq_recruit_places", ["recruitment_id"])
    op.create_index("ix_rq_recruit_places_participant_id", "rq_recruit_places", ["participant_id"])
    op.create_index("ix_rq_recruit_places_worker_id", "rq_recruit_places", ["worker_id"])
    op.create_table(
        "rq_recruit_assignments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("place_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("assignment_id", sa.String(length=64), nullable=False),
        sa.Column("hit_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["place_id"], ["rq_recruit_places.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("assignment_id"),
    )
    op.create_index("ix_rq_recruit_assignments_place_id", "rq_recruit_assignments", ["place_id"])
    op.create_index("ix_rq_recruit_assignments_session_id", "rq_recruit_assignments", ["session_id"])
    op.create_table(
        "rq_recruit_outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("recruitment_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("submission_id", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(length=200), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.Column("applied_at", hits.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["recruitment_id"], ["rq_recruitments.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("action", "submission_id"),
    )
    op.create_index("ix_rq_recruit_outbox_recruitment_id", "rq_recruit_outbox", ["recruitment_id"])
    op.create_index("ix_rq_recruit_outbox_status", "rq_recruit_outbox", ["status"])


def downgrade() -> None:
    op.drop_table("rq_recruit_outbox")
    op.drop_table("rq_recruit_assignments")
    op.drop_table("rq_recruit_places")
    op.drop_table("rq_recruitments")
