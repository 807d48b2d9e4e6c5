"""Keep each run's plan and copied bytes per segment, so reports regenerate from the ledger alone.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("km_runs") as batch:
        batch.add_column(sa.Column("plan", sa.JSON))
    with op.batch_alter_table("km_segments") as batch:
        batch.add_column(sa.Column("copied_bytes", sa.BigInteger))


def downgrade() -> None:
    with op.batch_alter_table("km_segments") as batch:
        batch.drop_column("copied_bytes")
    with op.batch_alter_table("km_runs") as batch:
        batch.drop_column("plan")
