"""qualification test attempts (the test clock on the server); files uploaded for FileUploadAnswer

Revision ID: mar0008
Revises: mar0007
"""

import sqlalchemy as sa
from alembic import op

import hits.db

revision = "mar0008"
down_revision = "mar0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "market_qualification_test_attempts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("qualification_type_id", sa.String(length=32), nullable=False),
        sa.Column("worker_id", sa.String(length=20), nullable=False),
        sa.Column("started_at", hits.db.UTCDateTime(), nullable=False),
        sa.Column("deadline", hits.db.UTCDateTime(), nullable=False),
        sa.Column("submitted_at", hits.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["qualification_type_id"], ["market_qualification_types.id"]),
        sa.ForeignKeyConstraint(["worker_id"], ["market_workers.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("qualification_type_id", "worker_id"),
    )
    op.create_index(
        "ix_market_qualification_test_attempts_worker_id",
        "market_qualification_test_attempts",
        ["worker_id"],
        unique=False,
    )
    op.create_table(
        "market_uploaded_files",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("assignment_id", sa.String(length=32), nullable=False),
        sa.Column("question_identifier", sa.String(length=512), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("content_type", sa.String(length=255), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", hits.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["assignment_id"], ["market_assignments.id"]),
        sa.PrimaryKeyConstraint("key"),
        sa.UniqueConstraint("assignment_id", "question_identifier"),
    )
    op.create_index(
        "ix_market_uploaded_files_assignment_id", "market_uploaded_files", ["assignment_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_market_uploaded_files_assignment_id", table_name="market_uploaded_files")
    op.drop_table("market_uploaded_files")
    op.drop_index(
        "ix_market_qualification_test_attempts_worker_id", table_name="market_qualification_test_attempts"
    )
    op.drop_table("market_qualification_test_attempts")
