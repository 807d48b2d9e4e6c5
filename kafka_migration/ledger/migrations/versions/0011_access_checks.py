"""One row per access sync: its verdict, the decision check's result (actions checked, the ones decided
differently, bindings that could not be read) and the digest of its report.

Revision ID: 0011_access_checks
Revises: 0010_access_probes
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_access_checks"
down_revision = "0010_access_probes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_access_checks",
        sa.Column("sync_id", sa.String(250), primary_key=True),
        sa.Column("run_id", sa.String(250)),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source_cluster_id", sa.String(250), nullable=False),
        sa.Column("target_cluster_id", sa.String(250), nullable=False),
        sa.Column("source_bootstrap", sa.Text, nullable=False),
        sa.Column("target_bootstrap", sa.Text, nullable=False),
        sa.Column("dry_run", sa.Integer, nullable=False, server_default="0"),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("actions_checked", sa.Integer, nullable=False),
        sa.Column("differences", sa.JSON, nullable=False),
        sa.Column("unreadable_source", sa.Integer, nullable=False, server_default="0"),
        sa.Column("unreadable_target", sa.Integer, nullable=False, server_default="0"),
        sa.Column("report_sha256", sa.String(80)),
    )
    op.create_index("ix_km_access_checks_time", "km_access_checks", ["synced_at"])


def downgrade() -> None:
    op.drop_index("ix_km_access_checks_time", "km_access_checks")
    op.drop_table("km_access_checks")
