"""What an access sync looked at: ACL bindings (added, present, refused, in conflict or removed) and SCRAM
credentials (added, present, needing a password; the login proven), never a secret.

Revision ID: 0008_access_syncs
Revises: 0007_target_losses
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_access_syncs"
down_revision = "0007_target_losses"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_access_syncs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("sync_id", sa.String(250), nullable=False),
        sa.Column("run_id", sa.String(250)),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source_cluster_id", sa.String(250), nullable=False),
        sa.Column("target_cluster_id", sa.String(250), nullable=False),
        sa.Column("dry_run", sa.Integer, nullable=False, server_default="0"),
        sa.Column("resource_type", sa.String(30), nullable=False),
        sa.Column("resource_name", sa.String(255), nullable=False),
        sa.Column("pattern_type", sa.String(20), nullable=False),
        sa.Column("principal", sa.String(255), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("operation", sa.String(30), nullable=False),
        sa.Column("permission", sa.String(10), nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text),
    )
    op.create_index("ix_km_access_syncs_sync", "km_access_syncs", ["sync_id"])
    op.create_index("ix_km_access_syncs_clusters", "km_access_syncs", ["source_cluster_id", "target_cluster_id"])
    op.create_table(
        "km_access_users",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("sync_id", sa.String(250), nullable=False),
        sa.Column("user", sa.String(255), nullable=False),
        sa.Column("mechanism", sa.String(20), nullable=False),
        sa.Column("iterations", sa.Integer, nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("login", sa.String(20)),
        sa.Column("reason", sa.Text),
    )
    op.create_index("ix_km_access_users_sync", "km_access_users", ["sync_id"])


def downgrade() -> None:
    op.drop_index("ix_km_access_users_sync", "km_access_users")
    op.drop_table("km_access_users")
    op.drop_index("ix_km_access_syncs_clusters", "km_access_syncs")
    op.drop_index("ix_km_access_syncs_sync", "km_access_syncs")
    op.drop_table("km_access_syncs")
