// Paths inside the Airflow UI (the host router adds its base path).
export const CONSOLE = "/plugin/kafka-migrations";

export const consoleRun = (runId: string): string => `${CONSOLE}/runs/${encodeURIComponent(runId)}`;
export const consoleAccessSync = (syncId: string): string => `${CONSOLE}/access/${encodeURIComponent(syncId)}`;
export const dagRun = (dagId: string, dagRunId: string): string =>
  `/dags/${encodeURIComponent(dagId)}/runs/${encodeURIComponent(dagRunId)}`;
export const taskLogs = (dagId: string, dagRunId: string, taskId: string, mapped = false): string =>
  `${dagRun(dagId, dagRunId)}/tasks/${encodeURIComponent(taskId)}${mapped ? "/mapped" : ""}`;
export const dagPage = (dagId: string): string => `/dags/${encodeURIComponent(dagId)}`;
