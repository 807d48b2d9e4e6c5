"""Cutovers: the final run, the offsets at the switch (where failback starts), groups, status.

Revision ID: 0005_cutovers
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_cutovers"
down_revision = "0004_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_cutovers",
        sa.Column("cutover_id", sa.String(250), primary_key=True),
        sa.Column("trigger", sa.String(40), nullable=False),
        sa.Column("dag_id", sa.String(250)),
        sa.Column("dag_run_id", sa.String(250)),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("source_cluster_id", sa.String(250), nullable=False),
        sa.Column("source_bootstrap", sa.Text, nullable=False),
        sa.Column("target_cluster_id", sa.String(250), nullable=False),
        sa.Column("target_bootstrap", sa.Text, nullable=False),
        sa.Column("run_id", sa.String(250)),
        sa.Column("topics", sa.JSON, nullable=False),
        sa.Column("groups", sa.JSON, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True)),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("message", sa.Text),
        sa.Column("report_sha256", sa.String(80)),
        sa.Column("failback_run_id", sa.String(250)),
        sa.Column("failback_status", sa.String(20)),
        sa.Column("failback_started_at", sa.DateTime(timezone=True)),
        sa.Column("failback_ended_at", sa.DateTime(timezone=True)),
        sa.Column("failback_message", sa.Text),
    )
    op.create_index("ix_km_cutovers_clusters", "km_cutovers", ["source_cluster_id", "target_cluster_id"])


def downgrade() -> None:
    op.drop_index("ix_km_cutovers_clusters", "km_cutovers")
    op.drop_table("km_cutovers")
