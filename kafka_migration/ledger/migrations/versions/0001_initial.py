"""Initial ledger: runs, segments, checkpoints, offset map.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_runs",
        sa.Column("run_id", sa.String(250), primary_key=True),
        sa.Column("trigger", sa.String(40), nullable=False),
        sa.Column("dag_id", sa.String(250)),
        sa.Column("dag_run_id", sa.String(250)),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("source_cluster_id", sa.String(250), nullable=False),
        sa.Column("source_bootstrap", sa.Text, nullable=False),
        sa.Column("target_cluster_id", sa.String(250), nullable=False),
        sa.Column("target_bootstrap", sa.Text, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True)),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("topics", sa.Integer, nullable=False),
        sa.Column("records", sa.BigInteger, nullable=False),
        sa.Column("warnings", sa.JSON, nullable=False),
        sa.Column("report_sha256", sa.String(80)),
        sa.Column("message", sa.Text),
    )
    op.create_table(
        "km_segments",
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
        sa.Column("target_end", sa.BigInteger),
        sa.Column("expired_offsets", sa.BigInteger, nullable=False),
        sa.Column("copied_records", sa.BigInteger),
        sa.Column("resumed_records", sa.BigInteger),
        sa.Column("source_records", sa.BigInteger),
        sa.Column("target_records", sa.BigInteger),
        sa.Column("source_checksum", sa.String(80)),
        sa.Column("target_checksum", sa.String(80)),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("first_difference", sa.Text),
        sa.Column("first_source_offset", sa.BigInteger),
        sa.Column("first_target_offset", sa.BigInteger),
        sa.Column("copy_seconds", sa.Float),
        sa.Column("verify_seconds", sa.Float),
        sa.Column("error", sa.Text),
        sa.UniqueConstraint("run_id", "source_topic", "partition", name="uq_km_segments_run_partition"),
    )
    op.create_index(
        "ix_km_segments_key",
        "km_segments",
        ["source_cluster_id", "source_topic", "partition", "target_cluster_id", "target_topic"],
    )
    op.create_table(
        "km_checkpoints",
        sa.Column("source_cluster_id", sa.String(250), primary_key=True),
        sa.Column("source_topic", sa.String(250), primary_key=True),
        sa.Column("partition", sa.Integer, primary_key=True),
        sa.Column("target_cluster_id", sa.String(250), primary_key=True),
        sa.Column("target_topic", sa.String(250), primary_key=True),
        sa.Column("source_offset", sa.BigInteger, nullable=False),
        sa.Column("target_offset", sa.BigInteger, nullable=False),
        sa.Column("run_id", sa.String(250), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "km_offset_map",
        sa.Column("segment_id", sa.Integer, sa.ForeignKey("km_segments.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("source_offset", sa.BigInteger, primary_key=True),
        sa.Column("target_offset", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("km_offset_map")
    op.drop_table("km_checkpoints")
    op.drop_index("ix_km_segments_key", table_name="km_segments")
    op.drop_table("km_segments")
    op.drop_table("km_runs")
