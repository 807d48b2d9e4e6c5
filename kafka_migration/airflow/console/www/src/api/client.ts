// The console's JSON API (kafka_migration/airflow/console/api.py), served by the plugin's FastAPI app under
// /kafka-migrations next to the Airflow UI, and Airflow's public REST API for triggering a failback. Both
// use the UI's login (its session cookie goes with same-origin requests). The API's paths, parameters and
// responses are typed from its OpenAPI description (openapi.ts, generated): a path or a parameter the API
// does not have, or a field it does not send, fails the type check.
import type { paths } from "./openapi";

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

const queryString = (params: object): string => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params) as Array<[string, unknown]>) {
    // Unset (undefined, null) and emptied ("") filters are left out: the API's defaults apply.
    if ((typeof value === "string" && value !== "") || typeof value === "number" || typeof value === "boolean") {
      search.set(key, String(value));
    }
  }
  const text = search.toString();
  return text ? `?${text}` : "";
};

/** The JSON API's GET routes (the reports are files, opened by their URL). */
export type ApiPath = Exclude<Extract<keyof paths, `/api/${string}`>, `${string}/report.{fmt}`>;
type Operation<P extends ApiPath> = paths[P]["get"];
export type ApiResponse<P extends ApiPath> = Operation<P>["responses"][200]["content"]["application/json"];
export type ApiQuery<P extends ApiPath> = NonNullable<Operation<P>["parameters"]["query"]>;
type PathParams<P extends ApiPath> = Operation<P>["parameters"]["path"];
type Params<P extends ApiPath> = { query?: ApiQuery<P> } & (PathParams<P> extends object ? { path: PathParams<P> } : { path?: never });
// A route with a path parameter ({run_id}) must be given it; the others may be called with no argument.
type ParamsArg<P extends ApiPath> = PathParams<P> extends object ? [params: Params<P>] : [params?: Params<P>];

export const get = <P extends ApiPath>(route: P, ...[params]: ParamsArg<P>): Promise<ApiResponse<P>> => {
  const values: Record<string, unknown> = params?.path ?? {};
  const path = route.replace(/\{(\w+)\}/gu, (_, name: string) => encodeURIComponent(String(values[name])));
  return request<ApiResponse<P>>(`${apiBase()}${path}${queryString(params?.query ?? {})}`);
};

export const reportUrl = (runId: string, format = "html"): string =>
  `${apiBase()}/runs/${encodeURIComponent(runId)}/report.${format}`;
export const accessReportUrl = (syncId: string, format = "html"): string =>
  `${apiBase()}/api/access-syncs/${encodeURIComponent(syncId)}/report.${format}`;
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
