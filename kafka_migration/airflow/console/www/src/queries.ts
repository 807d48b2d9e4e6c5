// Every read and write the console makes, and how often it polls: the one place that fetches. Pages call these
// hooks and render what they return; they never build a request. Keys name what was asked, so two pages asking
// the same share the answer (the host mounts a page afresh on every navigation; the cache outlives it).
import { keepPreviousData, useMutation, useQuery } from "@tanstack/react-query";

import { ApiError, dagDetails, get, triggerDag, type ApiQuery, type ApiResponse } from "./api/client";
import { recordProgress } from "./samples";

/** Milliseconds between refreshes: fast while a run runs (its progress moves), slow otherwise. */
export const POLL = { accessSyncs: 15_000, clusters: 60_000, cutovers: 10_000, groupSyncs: 15_000, overview: 30_000, running: 2000, runs: 15_000 } as const;

export const useOverview = () =>
  useQuery({ queryFn: () => get("/api/overview"), queryKey: ["overview"], refetchInterval: POLL.overview });

/** The clusters the ledger names, each with its name (and the cluster_names entries that could not be read). */
/** Not migrated yet, run after run, per pair of clusters (the overview's chart). */
export const useLagHistory = () =>
  useQuery({ queryFn: () => get("/api/lag-history"), queryKey: ["lag-history"], refetchInterval: POLL.overview });

export const useClusters = () =>
  useQuery({ queryFn: () => get("/api/clusters"), queryKey: ["clusters"], refetchInterval: POLL.clusters, staleTime: POLL.clusters });

/** Each cluster's name by its id (null: it has none); until the names arrive, every cluster is read by its id. */
export const useClusterNames = (): ((clusterId: string) => string | null) => {
  const { data } = useClusters();
  const names = new Map((data?.clusters ?? []).map((c) => [c.cluster_id, c.name]));
  return (clusterId) => names.get(clusterId) ?? null;
};

export const useRunFacets = () => useQuery({ queryFn: () => get("/api/runs/facets"), queryKey: ["facets"] });

/** A page of runs; it refreshes every 2 s while any run is running (each running run's progress is kept: samples.ts). */
export const useRuns = (query: ApiQuery<"/api/runs">) =>
  useQuery({
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const page = await get("/api/runs", { query });
      page.runs.forEach(recordProgress);
      return page;
    },
    queryKey: ["runs", query],
    refetchInterval: (q) => ((q.state.data?.running ?? 0) > 0 ? POLL.running : POLL.runs),
  });

type RunDetail = ApiResponse<"/api/runs/{run_id}">;

const keepingProgress = async (detail: Promise<RunDetail>): Promise<RunDetail> => {
  const answer = await detail;
  recordProgress(answer.run);
  return answer;
};

// A run's page refreshes while it runs and stops once it has ended; a 404 (no such run) is an answer, not a retry.
const runDetailOptions = {
  refetchInterval: (q: { state: { data?: RunDetail } }) => (q.state.data?.run.status === "running" ? POLL.running : false),
  retry: (failures: number, error: Error) => !(error instanceof ApiError && error.status === 404) && failures < 1,
} as const;

export const useRun = (runId: string) =>
  useQuery({
    ...runDetailOptions,
    queryFn: () => keepingProgress(get("/api/runs/{run_id}", { path: { run_id: runId } })),
    queryKey: ["run", runId],
  });

/** A run's schemas (--schema-ids, Param schema_ids): null when it moved none (the API's 404). Refreshed while the
 *  run runs: its per-partition counts come with each verified partition. */
export const useRunSchemas = (runId: string, running: boolean) =>
  useQuery({
    queryFn: async () => {
      try {
        return await get("/api/runs/{run_id}/schemas", { path: { run_id: runId } });
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
    queryKey: ["run-schemas", runId],
    refetchInterval: running ? POLL.running : false,
  });

/** The run a DAG run made (404 when it made none: the tab says so). */
export const useDagRunRun = (dagId: string, dagRunId: string) =>
  useQuery({
    ...runDetailOptions,
    queryFn: () => keepingProgress(get("/api/runs/by-dag-run", { query: { dag_id: dagId, dag_run_id: dagRunId } })),
    queryKey: ["run-of-dag-run", dagId, dagRunId],
  });

export const useGroupSyncs = (query: ApiQuery<"/api/group-syncs">) =>
  useQuery({
    placeholderData: keepPreviousData,
    queryFn: () => get("/api/group-syncs", { query }),
    queryKey: ["group-syncs", query],
    refetchInterval: POLL.groupSyncs,
  });

export const useCutovers = (query: ApiQuery<"/api/cutovers">) =>
  useQuery({
    placeholderData: keepPreviousData,
    queryFn: () => get("/api/cutovers", { query }),
    queryKey: ["cutovers", query],
    refetchInterval: POLL.cutovers,
  });

/** The read-only pre-flight, asked only when the operator asks (``null``: not yet); it watches for seconds. */
export const usePreflight = (query: ApiQuery<"/api/cutover-preflight"> | null) =>
  useQuery({
    enabled: query !== null,
    queryFn: () => get("/api/cutover-preflight", { query: query ?? {} }),
    queryKey: ["preflight", query],
    retry: false,
  });

/** A page of access syncs (ACL bindings, SCRAM users, client quotas), newest first. */
export const useAccessSyncs = (query: ApiQuery<"/api/access-syncs">) =>
  useQuery({
    placeholderData: keepPreviousData,
    queryFn: () => get("/api/access-syncs", { query }),
    queryKey: ["access-syncs", query],
    refetchInterval: POLL.accessSyncs,
  });

/** One access sync as the sign-off report's security section tells it (recorded once: no polling; 404 is an answer). */
export const useAccessSync = (syncId: string) =>
  useQuery({
    queryFn: () => get("/api/access-syncs/{sync_id}", { path: { sync_id: syncId } }),
    queryKey: ["access-sync", syncId],
    retry: (failures: number, error: Error) => !(error instanceof ApiError && error.status === 404) && failures < 1,
  });

/** A DAG's details from Airflow's REST API: its Params, for a trigger form. */
export const useDagDetails = (dagId: string) =>
  useQuery({ queryFn: () => dagDetails(dagId), queryKey: ["dag", dagId] });

/** Triggers a DAG run through Airflow's REST API, which checks the conf against the DAG's Param schemas. */
export const useTriggerDag = (dagId: string) =>
  useMutation({ mutationFn: (conf: Record<string, unknown>) => triggerDag(dagId, conf) });
