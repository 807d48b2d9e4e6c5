"""Verified records a target lost, found by a later run, and whether the operator accepted the loss.

Revision ID: 0007_target_losses
Revises: 0006_run_timings
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_target_losses"
down_revision = "0006_run_timings"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_target_losses",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(250), sa.ForeignKey("km_runs.run_id", ondelete="CASCADE"), nullable=False),
        sa.Column("source_cluster_id", sa.String(250), nullable=False),
        sa.Column("source_topic", sa.String(250), nullable=False),
        sa.Column("partition", sa.Integer, nullable=False),
        sa.Column("target_cluster_id", sa.String(250), nullable=False),
        sa.Column("target_topic", sa.String(250), nullable=False),
        sa.Column("source_start", sa.BigInteger, nullable=False),
        sa.Column("source_end", sa.BigInteger, nullable=False),
        sa.Column("target_start", sa.BigInteger, nullable=False),
        sa.Column("target_end", sa.BigInteger, nullable=False),
        sa.Column("verified_by", sa.String(250), nullable=False),
        sa.Column("accepted", sa.Integer, nullable=False, server_default="0"),
        sa.Column("found_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_km_target_losses_clusters", "km_target_losses", ["source_cluster_id", "target_cluster_id"])


def downgrade() -> None:
    op.drop_index("ix_km_target_losses_clusters", "km_target_losses")
    op.drop_table("km_target_losses")
