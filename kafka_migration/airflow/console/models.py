"""Response models of the console's JSON API: they document it (OpenAPI) and check what it sends.

Each is named ``...View``: what a route shows of a ledger row or of a cluster's answer, so that no name is
also one of the core package's values (its group syncs, cutovers and pre-flight are dataclasses). The
console's TypeScript types are generated from them (``console/openapi.py``, then openapi-typescript).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_PAGE = 200  # rows one page of the console's API returns at most


class ApiView(BaseModel):
    """Every field is sent, defaults included, so the OpenAPI schema marks each one required: the generated
    TypeScript types then need no ``undefined`` checks."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)


class AliasedView(ApiView):
    """A view with a field named ``copy`` (``copy_`` here: ``BaseModel.copy`` exists), sent by its alias."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class TimingsView(AliasedView):
    """Seconds of one run: where the wall time went (copy and verification may overlap)."""

    wall: float
    plan: float = 0.0
    startup: float = 0.0
    copy_: float = Field(0.0, alias="copy")
    verify: float = 0.0
    overlap: float = 0.0
    bookkeeping: float = 0.0


class StepTotalsView(ApiView):
    done: int = Field(description="records copied (or verified) so far")
    planned: int = Field(description="offsets the run planned")
    rate: float = Field(description="records per second now")
    eta_seconds: float | None = Field(description="time left at this rate; null while unknown")
    topics_done: int


class PartitionStepView(ApiView):
    done: int
    rate: float
    eta_seconds: float | None
    finished: bool


class PartitionProgressView(AliasedView):
    topic: str
    partition: int
    planned: int
    copy_: PartitionStepView = Field(alias="copy")
    verify: PartitionStepView


class RunProgressView(ApiView):
    """A running run's live progress, from the Spark driver's snapshot files (informational, never evidence)."""

    started: str | None
    updated: str | None = Field(description="when the driver last wrote its snapshot")
    age_seconds: float | None
    stale: bool = Field(description="no snapshot for 30 s: the driver may be gone")
    phase: str
    totals: dict[str, StepTotalsView]
    partitions: list[PartitionProgressView]


class ProgressSummaryView(ApiView):
    phase: str
    stale: bool
    copied: int
    verified: int
    planned: int
    rate: float
    eta_seconds: float | None
    updated: str | None


class RunView(ApiView):
    run_id: str
    kind: str = Field(description="migration, nightly sync, cutover, failback or CLI run")
    trigger: str
    dag_id: str | None
    dag_run_id: str | None
    source_cluster_id: str
    source_bootstrap: str | None = Field(description="where the source was reached (its bootstrap addresses)")
    target_cluster_id: str
    target_bootstrap: str | None = Field(description="where the target was reached")
    started_at: str | None
    ended_at: str | None
    status: str
    verdict: str = Field(description="the report's word for the status, e.g. VERIFIED, INCOMPLETE")
    topics: int
    records: int = Field(
        description="records copied: the ledger's count once the run has ended; while it runs, what its live "
        "progress counts so far"
    )
    report_sha256: str | None
    message: str | None
    timings: TimingsView | None
    duration_seconds: float | None
    progress: ProgressSummaryView | None = Field(None, description="for a running run")
    cutover_id: str | None = Field(None, description="the cutover whose final (or failback) run this is")


class RunsPageView(ApiView):
    total: int
    limit: int
    offset: int
    running: int = Field(description="runs running now (the page refreshes while there are)")
    runs: list[RunView]


class RunFacetsView(ApiView):
    dag_ids: list[str | None]
    statuses: list[str]
    pairs: list[tuple[str, str]]


class SegmentView(ApiView):
    """One partition of a run: `start` and `end` as Kafka gives them, the end excluded (the next offset)."""

    source_topic: str
    partition: int
    target_topic: str
    source_start: int
    source_end: int
    target_start: int
    target_end: int | None
    expired_offsets: int
    copied_records: int | None
    resumed_records: int | None
    copied_bytes: int | None
    source_records: int | None
    target_records: int | None
    source_checksum: str | None
    target_checksum: str | None
    status: str
    first_difference: str | None
    first_source_offset: int | None
    first_target_offset: int | None
    copy_seconds: float | None
    verify_seconds: float | None
    error: str | None


class RunDetailView(ApiView):
    run: RunView
    options: dict[str, Any]
    warnings: list[str]
    segments: list[SegmentView]
    progress: RunProgressView | None
    group_syncs: list[str] = Field(description="ids of the consumer group syncs made by this run")


class TopicLagView(ApiView):
    source_topic: str
    target_topic: str
    partitions: int
    migrated: int = Field(description="offsets verified on the target (sum of the checkpoints)")
    source_end: int | None = Field(description="the source's end offsets now (sum); null when unreachable")
    lag: int | None = Field(description="offsets not migrated yet: what the next nightly sync copies")
    last_run_id: str
    last_dag_id: str | None
    last_verified_at: str | None
    age_seconds: float | None
    lost: int | None = Field(
        description="verified records the target no longer holds although the source still does (0: none lost); "
        "null when the clusters could not be read"
    )


class ClusterPairView(ApiView):
    source_cluster_id: str
    target_cluster_id: str
    source_bootstrap: str
    target_bootstrap: str
    runs: int
    last_started_at: str | None
    source_reachable: bool
    source_error: str | None
    lag: int | None
    lost: int | None = Field(description="verified records the target lost, over every topic; null: not checked")
    lost_error: str | None = Field(description="why the loss check could not read the clusters")
    topics: list[TopicLagView]


class ClusterNameView(ApiView):
    """A cluster as a person reads it: a name beside its id."""

    cluster_id: str
    name: str | None = Field(description="the name given in cluster_names, else the matching connection's id")
    named_by: str | None = Field(description="setting (cluster_names), connection, or null: no name")
    connections: list[str] = Field(description="the Kafka connections whose bootstrap addresses are the cluster's")
    bootstraps: list[str] = Field(description="the bootstrap lists the ledger recorded for the cluster")


class ClustersView(ApiView):
    clusters: list[ClusterNameView]
    problems: list[str] = Field(description="cluster_names entries that are not CLUSTER_ID=name")


class RunLagView(ApiView):
    """One run of a pair: what was not migrated yet when it planned and after it ended (records, summed over the
    partitions it planned)."""

    run_id: str
    kind: str
    status: str
    started_at: str | None
    ended_at: str | None
    at_start: int | None = Field(
        description="records past the checkpoints up to the source's end as the run found it (its planned ranges); "
        "null: the ledger has no plan of the run"
    )
    after: int | None = Field(
        description="of those, the records the run did not verify (their checkpoints stayed); null while it runs"
    )


class PairLagHistoryView(ApiView):
    source_cluster_id: str
    target_cluster_id: str
    runs: list[RunLagView] = Field(description="oldest first")


class LagHistoryView(ApiView):
    """Not migrated yet, run after run, per pair of clusters: the overview's chart."""

    limit: int = Field(description="runs per pair, the newest")
    pairs: list[PairLagHistoryView]


class OverviewView(ApiView):
    pairs: list[ClusterPairView]
    running: int


class GroupSyncRowView(ApiView):
    group_id: str
    source_topic: str
    partition: int
    source_offset: int
    source_end: int | None
    lag: int | None = Field(description="records the group had left to read on the source")
    target_topic: str | None
    target_offset: int | None
    previous_target_offset: int | None
    translation: str | None
    translated_by: str | None
    outcome: str
    proof: str | None
    reason: str | None


class GroupSyncView(ApiView):
    sync_id: str
    run_id: str | None
    synced_at: str | None
    source_cluster_id: str
    target_cluster_id: str
    groups: int
    partitions: int
    not_ok: int
    rows: list[GroupSyncRowView]


class GroupSyncsPageView(ApiView):
    total: int
    limit: int
    offset: int
    syncs: list[GroupSyncView]


class ChecklistItemView(ApiView):
    step: str
    done: bool | None
    detail: str


class CutoverView(ApiView):
    cutover_id: str
    trigger: str
    dag_id: str | None
    dag_run_id: str | None
    status: str
    message: str | None
    source_cluster_id: str
    target_cluster_id: str
    source_bootstrap: str
    target_bootstrap: str
    run_id: str | None
    started_at: str | None
    ended_at: str | None
    params: dict[str, Any]
    groups: list[str]
    topics: list[dict[str, Any]]
    failback_run_id: str | None
    failback_status: str | None
    can_fail_back: bool = Field(description="completed and not failed back: kafka_failback may take its id")
    checklist: list[ChecklistItemView]


class CutoversPageView(ApiView):
    total: int
    limit: int
    offset: int
    cutovers: list[CutoverView]


class PreflightTopicView(ApiView):
    topic: str
    partitions: int
    end_offsets: dict[str, int]
    new_offsets: int = Field(description="offsets written during the quiet window")
    open_transactions: list[int]
    quiet: bool


class PreflightGroupSideView(ApiView):
    state: str
    members: int
    active: bool


class PreflightGroupView(ApiView):
    group_id: str
    source: PreflightGroupSideView
    target: PreflightGroupSideView


class PreflightView(ApiView):
    """The cutover pre-flight's checks, read only: nothing is recorded and nothing is switched."""

    source: dict[str, str]
    target: dict[str, str]
    quiet_seconds: float
    topics: list[PreflightTopicView]
    groups: list[PreflightGroupView]
    problems: list[str]
    ready: bool


# -- access syncs (ACL bindings, SCRAM users, client quotas), as the sign-off report's security section --------


class AccessClusterView(ApiView):
    cluster_id: str
    bootstrap: str


class AccessTotalsView(ApiView):
    """What an access sync did with the source's bindings, summed over every resource type and pattern."""

    added: int = Field(description="bindings written to the target (a dry run: would write)")
    present: int = Field(description="bindings the target already had")
    removed: int = Field(description="bindings this tool had created and the source no longer has")
    refused: int = Field(description="bindings not carried (e.g. a name the rename cannot map)")
    conflict: int = Field(description="target-only bindings that change what the source allows")


class AccessSyncView(ApiView):
    """One access sync in the list: its verdict and what needs a person's attention."""

    sync_id: str
    run_id: str | None
    synced_at: str | None
    dry_run: bool
    verdict: str = Field(description="proven: both clusters decide alike; different: they do not")
    source: AccessClusterView
    target: AccessClusterView
    totals: AccessTotalsView
    needs_password: list[str] = Field(description="SCRAM users not created: the operator gave no password")
    quota_differences: int
    probe_mismatches: int = Field(description="live probes the target answered otherwise than the source")
    report_sha256: str | None


class AccessSyncsPageView(ApiView):
    total: int
    limit: int
    offset: int
    syncs: list[AccessSyncView]


class AccessCountView(ApiView):
    resource_type: str
    pattern_type: str
    added: int
    present: int
    removed: int
    refused: int
    conflict: int


class AccessBindingView(ApiView):
    action: str
    binding: str = Field(description="the binding as the CLI describes it, e.g. ALLOW User:a READ on TOPIC t")
    resource_type: str
    pattern_type: str
    reason: str | None


class AccessUserView(ApiView):
    user: str
    mechanism: str
    iterations: int
    action: str
    login: str | None = Field(description="the user's login to the target (proven, failed), never a secret")
    reason: str | None


class AccessQuotaView(ApiView):
    entity: str
    key: str
    value: float | None
    target_value: float | None
    action: str
    reason: str | None


class AccessProbesView(ApiView):
    total: int
    matched: int
    mismatches: list[str]


class AccessDecisionCheckView(ApiView):
    """Every (principal, operation, resource) the bindings name, decided by each cluster's rules."""

    actions_checked: int
    differences: list[str]
    unreadable: list[int] = Field(description="bindings neither cluster could read: [source, target]")


class AccessReportView(ApiView):
    directory: str = Field(description="where the sync's report files are (or would be)")
    files: list[str] = Field(description="the formats written (html, json, md); none for a dry run")


class AccessSyncDetailView(ApiView):
    """An access sync as the sign-off report's security section shows it."""

    sync_id: str
    synced_at: str | None
    dry_run: bool
    verdict: str
    source: AccessClusterView
    target: AccessClusterView
    counts: list[AccessCountView]
    bindings: list[AccessBindingView]
    users: list[AccessUserView]
    needs_password: list[str]
    quotas: list[AccessQuotaView]
    quota_differences: int
    probes: AccessProbesView
    run_id: str | None
    decision_check: AccessDecisionCheckView
    report_sha256: str | None
    report: AccessReportView
