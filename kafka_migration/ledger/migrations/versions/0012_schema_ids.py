"""The schema ids a run moved (issue 48): one row per subject version it needed on the target registry, with the
source id, the target id, what the run did (present, registered) and the canonical fingerprint both ids name;
and on each segment the keys and values its verification found translated, unchanged or without a header.

Revision ID: 0012_schema_ids
Revises: 0011_access_checks
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_schema_ids"
down_revision = "0011_access_checks"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "km_schema_ids",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(250), sa.ForeignKey("km_runs.run_id", ondelete="CASCADE"), nullable=False),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("source_registry", sa.Text, nullable=False),
        sa.Column("target_registry", sa.Text, nullable=False),
        sa.Column("source_subject", sa.String(255), nullable=False),
        sa.Column("target_subject", sa.String(255), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("target_version", sa.Integer),
        sa.Column("format", sa.String(20), nullable=False),
        sa.Column("source_id", sa.BigInteger, nullable=False),
        sa.Column("target_id", sa.BigInteger),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("fingerprint", sa.String(80)),
        sa.Column("position", sa.Integer, nullable=False),
    )
    op.create_index("ix_km_schema_ids_run", "km_schema_ids", ["run_id"])
    with op.batch_alter_table("km_segments") as batch:
        batch.add_column(sa.Column("schema_counts", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("km_segments") as batch:
        batch.drop_column("schema_counts")
    op.drop_index("ix_km_schema_ids_run", "km_schema_ids")
    op.drop_table("km_schema_ids")
