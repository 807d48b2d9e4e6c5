"""What each cluster answered an access sync's live probes: a user, an operation on a resource (as the source and
the target name them), both outcomes and whether they matched; never a secret.

Revision ID: 0010_access_probes
Revises: 0009_access_quotas
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_access_probes"
down_revision = "0009_access_quotas"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_access_probes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("sync_id", sa.String(250), nullable=False),
        sa.Column("user", sa.String(255), nullable=False),
        sa.Column("target_user", sa.String(255), nullable=False),
        sa.Column("probe", sa.String(20), nullable=False),
        sa.Column("resource", sa.String(255), nullable=False),
        sa.Column("target_resource", sa.String(255), nullable=False),
        sa.Column("topic", sa.String(255)),
        sa.Column("source_outcome", sa.Text, nullable=False),
        sa.Column("target_outcome", sa.Text, nullable=False),
        sa.Column("matched", sa.Integer, nullable=False),
    )
    op.create_index("ix_km_access_probes_sync", "km_access_probes", ["sync_id"])


def downgrade() -> None:
    op.drop_index("ix_km_access_probes_sync", "km_access_probes")
    op.drop_table("km_access_probes")
