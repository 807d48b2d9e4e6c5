"""The client quotas an access sync looked at: each quota (entity, key, value as the source has it, carried), the
target's value before the sync, and what the sync did with it (added, present, updated, different, target_only,
removed). The quotas this tool set on a target are read back from here: only those may later change or go.

Revision ID: 0009_access_quotas
Revises: 0008_access_syncs
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_access_quotas"
down_revision = "0008_access_syncs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_access_quotas",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("sync_id", sa.String(250), nullable=False),
        sa.Column("run_id", sa.String(250)),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source_cluster_id", sa.String(250), nullable=False),
        sa.Column("target_cluster_id", sa.String(250), nullable=False),
        sa.Column("dry_run", sa.Integer, nullable=False, server_default="0"),
        sa.Column("entity", sa.Text, nullable=False),
        sa.Column("quota_key", sa.String(100), nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("target_value", sa.Float),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text),
    )
    op.create_index("ix_km_access_quotas_sync", "km_access_quotas", ["sync_id"])
    op.create_index("ix_km_access_quotas_clusters", "km_access_quotas", ["source_cluster_id", "target_cluster_id"])


def downgrade() -> None:
    op.drop_index("ix_km_access_quotas_clusters", "km_access_quotas")
    op.drop_index("ix_km_access_quotas_sync", "km_access_quotas")
    op.drop_table("km_access_quotas")
