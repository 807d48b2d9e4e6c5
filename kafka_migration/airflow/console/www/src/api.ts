// The console's JSON API (kafka_migration/airflow/console/api.py), served by the plugin's FastAPI app under
// /kafka-migrations next to the Airflow UI, and Airflow's public REST API for triggering a failback. Both
// use the UI's login (its session cookie goes with same-origin requests).

export const apiBase = (): string => new URL("kafka-migrations", document.baseURI).href;
const airflowApi = (): string => new URL("api/v2", document.baseURI).href;

export class ApiError extends Error {
  status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

async function request<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" }, ...init });
  if (!response.ok) {
    let detail = `${response.status} ${response.statusText}`;
    try {
      const body = (await response.json()) as { detail?: unknown };
      if (typeof body.detail === "string") detail = body.detail;
      else if (body.detail !== undefined) detail = JSON.stringify(body.detail);
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(response.status, detail);
  }
  return (await response.json()) as T;
}

const query = (params: Record<string, string | number | undefined | null>): string => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
};

export const get = <T,>(path: string, params: Record<string, string | number | undefined | null> = {}): Promise<T> =>
  request<T>(`${apiBase()}/api${path}${query(params)}`);

export const reportUrl = (runId: string, format = "html"): string =>
  `${apiBase()}/runs/${encodeURIComponent(runId)}/report.${format}`;
export const cutoverReportUrl = (cutoverId: string): string =>
  `${apiBase()}/cutovers/${encodeURIComponent(cutoverId)}/report.html`;

// -- Airflow's public REST API (the failback's trigger form) -------------------------------------------

export type DagParam = { value: unknown; description?: string | null; schema: Record<string, unknown> };
export type DagDetails = { dag_id: string; is_paused: boolean; params: Record<string, DagParam> };

export const dagDetails = (dagId: string): Promise<DagDetails> =>
  request<DagDetails>(`${airflowApi()}/dags/${encodeURIComponent(dagId)}/details`);

export const triggerDag = (dagId: string, conf: Record<string, unknown>): Promise<{ dag_run_id: string }> =>
  request(`${airflowApi()}/dags/${encodeURIComponent(dagId)}/dagRuns`, {
    body: JSON.stringify({ conf, logical_date: null }),
    headers: { Accept: "application/json", "Content-Type": "application/json" },
    method: "POST",
  });

// -- response types (models.py) ---------------------------------------------------------------------------

export type Timings = Record<"wall" | "plan" | "startup" | "copy" | "verify" | "overlap" | "bookkeeping", number>;
export type StepTotals = { done: number; planned: number; rate: number; eta_seconds: number | null; topics_done: number };
export type PartitionStep = { done: number; rate: number; eta_seconds: number | null; finished: boolean };
export type PartitionProgress = {
  topic: string;
  partition: number;
  planned: number;
  copy: PartitionStep;
  verify: PartitionStep;
};
export type Progress = {
  started: string | null;
  updated: string | null;
  age_seconds: number | null;
  stale: boolean;
  phase: string;
  totals: { copy: StepTotals; verify: StepTotals };
  partitions: Array<PartitionProgress>;
};
export type ProgressSummary = {
  phase: string;
  stale: boolean;
  copied: number;
  verified: number;
  planned: number;
  rate: number;
  eta_seconds: number | null;
  updated: string | null;
};
export type Run = {
  run_id: string;
  kind: string;
  trigger: string;
  dag_id: string | null;
  dag_run_id: string | null;
  source_cluster_id: string;
  target_cluster_id: string;
  started_at: string | null;
  ended_at: string | null;
  status: string;
  verdict: string;
  topics: number;
  records: number;
  report_sha256: string | null;
  message: string | null;
  timings: Timings | null;
  duration_seconds: number | null;
  progress: ProgressSummary | null;
  cutover_id: string | null;
};
export type RunsPage = { total: number; limit: number; offset: number; running: number; runs: Array<Run> };
export type Facets = { dag_ids: Array<string | null>; statuses: Array<string>; pairs: Array<[string, string]> };
export type Segment = {
  source_topic: string;
  partition: number;
  target_topic: string;
  source_start: number;
  source_end: number;
  target_start: number;
  target_end: number | null;
  expired_offsets: number;
  copied_records: number | null;
  resumed_records: number | null;
  copied_bytes: number | null;
  source_records: number | null;
  target_records: number | null;
  source_checksum: string | null;
  target_checksum: string | null;
  status: string;
  first_difference: string | null;
  first_source_offset: number | null;
  first_target_offset: number | null;
  copy_seconds: number | null;
  verify_seconds: number | null;
  error: string | null;
};
export type RunDetail = {
  run: Run;
  options: Record<string, unknown>;
  warnings: Array<string>;
  segments: Array<Segment>;
  progress: Progress | null;
  group_syncs: Array<string>;
};
export type TopicLag = {
  source_topic: string;
  target_topic: string;
  partitions: number;
  migrated: number;
  source_end: number | null;
  lag: number | null;
  last_run_id: string;
  last_dag_id: string | null;
  last_verified_at: string | null;
  age_seconds: number | null;
  lost: number | null;
};
export type Pair = {
  source_cluster_id: string;
  target_cluster_id: string;
  source_bootstrap: string;
  target_bootstrap: string;
  runs: number;
  last_started_at: string | null;
  source_reachable: boolean;
  source_error: string | null;
  lag: number | null;
  lost: number | null;
  lost_error: string | null;
  topics: Array<TopicLag>;
};
export type Overview = { pairs: Array<Pair>; running: number };
export type GroupSyncRow = {
  group_id: string;
  source_topic: string;
  partition: number;
  source_offset: number;
  source_end: number | null;
  lag: number | null;
  target_topic: string | null;
  target_offset: number | null;
  previous_target_offset: number | null;
  translation: string | null;
  translated_by: string | null;
  outcome: string;
  proof: string | null;
  reason: string | null;
};
export type GroupSync = {
  sync_id: string;
  run_id: string | null;
  synced_at: string | null;
  source_cluster_id: string;
  target_cluster_id: string;
  groups: number;
  partitions: number;
  not_ok: number;
  rows: Array<GroupSyncRow>;
};
export type GroupSyncsPage = { total: number; limit: number; offset: number; syncs: Array<GroupSync> };
export type ChecklistItem = { step: string; done: boolean | null; detail: string };
export type Cutover = {
  cutover_id: string;
  trigger: string;
  dag_id: string | null;
  dag_run_id: string | null;
  status: string;
  message: string | null;
  source_cluster_id: string;
  target_cluster_id: string;
  source_bootstrap: string;
  target_bootstrap: string;
  run_id: string | null;
  started_at: string | null;
  ended_at: string | null;
  params: Record<string, unknown>;
  groups: Array<string>;
  topics: Array<{ source_topic: string; target_topic: string; partitions: Array<Record<string, number>> }>;
  failback_run_id: string | null;
  failback_status: string | null;
  can_fail_back: boolean;
  checklist: Array<ChecklistItem>;
};
export type CutoversPage = { total: number; limit: number; offset: number; cutovers: Array<Cutover> };
export type GroupSide = { state: string; members: number; active: boolean };
export type Preflight = {
  source: Record<string, string>;
  target: Record<string, string>;
  quiet_seconds: number;
  topics: Array<{
    topic: string;
    partitions: number;
    end_offsets: Record<string, number>;
    new_offsets: number;
    open_transactions: Array<number>;
    quiet: boolean;
  }>;
  groups: Array<{ group_id: string; source: GroupSide; target: GroupSide }>;
  problems: Array<string>;
  ready: boolean;
};
