"""Where a run's wall time went, and which topics shared a Spark job, so any run's figures can be read back.

Revision ID: 0006_run_timings
Revises: 0005_cutovers
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_run_timings"
down_revision = "0005_cutovers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("km_runs") as batch:
        batch.add_column(sa.Column("timings", sa.JSON))
    with op.batch_alter_table("km_segments") as batch:
        batch.add_column(sa.Column("job_topics", sa.Integer))


def downgrade() -> None:
    with op.batch_alter_table("km_segments") as batch:
        batch.drop_column("job_topics")
    with op.batch_alter_table("km_runs") as batch:
        batch.drop_column("timings")
