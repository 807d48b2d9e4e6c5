"""Consumer group offset syncs: per group and partition, what was translated, written and proven.

Revision ID: 0003_group_syncs
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_group_syncs"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_group_syncs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("sync_id", sa.String(250), nullable=False),
        sa.Column("run_id", sa.String(250)),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source_cluster_id", sa.String(250), nullable=False),
        sa.Column("target_cluster_id", sa.String(250), nullable=False),
        sa.Column("group_id", sa.String(255), nullable=False),
        sa.Column("source_topic", sa.String(250), nullable=False),
        sa.Column("partition", sa.Integer, nullable=False),
        sa.Column("source_offset", sa.BigInteger, nullable=False),
        sa.Column("source_end", sa.BigInteger),
        sa.Column("target_topic", sa.String(250)),
        sa.Column("target_offset", sa.BigInteger),
        sa.Column("previous_target_offset", sa.BigInteger),
        sa.Column("translation", sa.String(20)),
        sa.Column("translated_by", sa.String(250)),
        sa.Column("outcome", sa.String(30), nullable=False),
        sa.Column("proof", sa.String(30)),
        sa.Column("reason", sa.Text),
    )
    op.create_index("ix_km_group_syncs_sync", "km_group_syncs", ["sync_id"])
    op.create_index("ix_km_group_syncs_run", "km_group_syncs", ["run_id"])
    op.create_index("ix_km_group_syncs_group", "km_group_syncs", ["source_cluster_id", "target_cluster_id", "group_id"])


def downgrade() -> None:
    op.drop_table("km_group_syncs")
