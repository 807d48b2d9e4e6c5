"""Leases (one writer per target topic) and the topic ids checkpoints were verified against.

Revision ID: 0004_leases
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_leases"
down_revision = "0003_group_syncs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_leases",
        sa.Column("target_cluster_id", sa.String(250), primary_key=True),
        sa.Column("target_topic", sa.String(250), primary_key=True),
        sa.Column("source_cluster_id", sa.String(250), nullable=False),
        sa.Column("source_topic", sa.String(250), nullable=False),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.Column("trigger", sa.String(40), nullable=False),
        sa.Column("holder", sa.Text, nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("taken_over_from", sa.String(250)),
    )
    op.create_index("ix_km_leases_run", "km_leases", ["run_id"])
    op.create_table(
        "km_checkpoint_topic_ids",
        sa.Column("source_cluster_id", sa.String(250), primary_key=True),
        sa.Column("source_topic", sa.String(250), primary_key=True),
        sa.Column("target_cluster_id", sa.String(250), primary_key=True),
        sa.Column("target_topic", sa.String(250), primary_key=True),
        sa.Column("source_topic_id", sa.String(64)),
        sa.Column("target_topic_id", sa.String(64)),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.Column("forgotten_through_segment", sa.Integer),
    )


def downgrade() -> None:
    op.drop_table("km_checkpoint_topic_ids")
    op.drop_index("ix_km_leases_run", table_name="km_leases")
    op.drop_table("km_leases")
