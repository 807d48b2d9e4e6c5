import { Box, Button, HStack, Input, Link as ChakraLink, NativeSelect, Stack, Table, Text } from "@chakra-ui/react";
import { useState } from "react";
import { Link } from "react-router-dom";

import { reportUrl } from "../api/client";
import type { RunView } from "../api/types";
import { ErrorBox, ID_CELL, Loading, Notice, Pager, ProgressLine, SimpleTable, StatusBadge } from "../components";
import { pageLimit, useUrlFilters } from "../filters";
import { cluster, count, plural, rate, seconds, time } from "../format";
import { consoleRun, dagRun, taskLogs } from "../links";
import { POLL, useClusterNames, useRunFacets, useRuns } from "../queries";

const LIMIT = 20;
const FILTERS = ["dag_id", "status", "pair", "topic", "since", "until"] as const;

export const RunLinks = ({ run }: { readonly run: RunView }) => (
  <HStack gap={2} fontSize="sm" wrap="wrap">
    {run.dag_id && run.dag_run_id ? (
      <>
        <ChakraLink asChild>
          <Link to={dagRun(run.dag_id, run.dag_run_id)}>DAG run</Link>
        </ChakraLink>
        <ChakraLink asChild>
          <Link to={taskLogs(run.dag_id, run.dag_run_id, "copy_verify", true)}>Spark logs</Link>
        </ChakraLink>
        <ChakraLink asChild>
          <Link to={taskLogs(run.dag_id, run.dag_run_id, "summary")}>Summary log</Link>
        </ChakraLink>
      </>
    ) : undefined}
    {run.status === "running" ? undefined : (
      <ChakraLink href={reportUrl(run.run_id)} rel="noreferrer" target="_blank">
        Report
      </ChakraLink>
    )}
  </HStack>
);

export const RunState = ({ run }: { readonly run: RunView }) => {
  const progress = run.progress;
  if (run.status !== "running" || !progress) return <StatusBadge label={run.verdict} status={run.status} />;
  return (
    <Stack gap={1} minW="180px">
      <StatusBadge label={progress.stale ? "RUNNING (no news)" : "RUNNING"} status="running" />
      {progress.updated ? (
        <>
          <ProgressLine done={progress.copied} label={`copy progress of ${run.run_id}`} planned={progress.planned} />
          <Text fontSize="xs" data-testid="run-progress">
            {count(progress.copied)} of {count(progress.planned)} copied, {count(progress.verified)} verified ·{" "}
            {rate(progress.rate)} · {progress.eta_seconds === null ? "time left –" : `${seconds(progress.eta_seconds)} left`}
          </Text>
        </>
      ) : (
        <Text fontSize="xs">{progress.phase}</Text>
      )}
    </Stack>
  );
};

export const RunsPage = () => {
  const [params, set, clear] = useUrlFilters();
  const offset = Number(params.get("offset") ?? 0);
  const limit = pageLimit(params, LIMIT, 200);
  const [topic, setTopic] = useState(params.get("topic") ?? "");
  const [source, target] = (params.get("pair") ?? "").split(">");
  const facets = useRunFacets();
  const names = useClusterNames();
  const { data, error, isLoading, dataUpdatedAt } = useRuns({
    dag_id: params.get("dag_id"),
    limit,
    offset,
    since: params.get("since") ? `${params.get("since")}T00:00:00Z` : undefined,
    source_cluster_id: source || undefined,
    status: params.get("status"),
    target_cluster_id: target || undefined,
    topic: params.get("topic"),
    until: params.get("until") ? `${params.get("until")}T23:59:59Z` : undefined,
  });

  const select = (key: string, label: string, options: Array<[string, string]>) => (
    <NativeSelect.Root size="sm" width="auto">
      <NativeSelect.Field aria-label={label} onChange={(e) => set(key, e.currentTarget.value)} value={params.get(key) ?? ""}>
        <option value="">{`Any ${label.toLowerCase()}`}</option>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </NativeSelect.Field>
      <NativeSelect.Indicator />
    </NativeSelect.Root>
  );

  return (
    <Box>
      <HStack as="form" gap={2} mb={3} wrap="wrap" onSubmit={(e) => { e.preventDefault(); set("topic", topic.trim()); }}>
        {select("dag_id", "DAG", (facets.data?.dag_ids ?? []).map((d) => [d ?? "cli", d ?? "CLI runs"]))}
        {select("status", "Verdict", (facets.data?.statuses ?? []).map((s) => [s, s.replaceAll("_", " ")]))}
        {select("pair", "Clusters", (facets.data?.pairs ?? []).map(([s, t]) => [`${s}>${t}`, `${cluster(s, null, names(s))} → ${cluster(t, null, names(t))}`]))}
        <Input aria-label="Topic" onChange={(e) => setTopic(e.currentTarget.value)} placeholder="Topic" size="sm" value={topic} width="180px" />
        <Input aria-label="Started from" onChange={(e) => set("since", e.currentTarget.value)} size="sm" type="date" value={params.get("since") ?? ""} width="150px" />
        <Input aria-label="Started until" onChange={(e) => set("until", e.currentTarget.value)} size="sm" type="date" value={params.get("until") ?? ""} width="150px" />
        <Button size="sm" type="submit">Filter</Button>
        {FILTERS.some((f) => params.get(f)) ? (
          <Button onClick={() => { setTopic(""); clear(); }} size="sm" variant="ghost">
            Clear filters
          </Button>
        ) : undefined}
      </HStack>
      {error ? <ErrorBox error={error} /> : undefined}
      {isLoading ? <Loading /> : undefined}
      {data ? (
        <>
          <Text color="fg.muted" fontSize="xs" mb={2} data-testid="runs-summary">
            {plural(data.total, "run")} {data.total === 1 ? "matches" : "match"} · {data.running} running now ·{" "}
            {`refreshing every ${(data.running > 0 ? POLL.running : POLL.runs) / 1000} s`} · updated {time(new Date(dataUpdatedAt).toISOString())}
          </Text>
          {data.runs.length === 0 ? (
            <Notice status="info" title="No run matches these filters" />
          ) : (
            <SimpleTable headers={["Run", "Kind", "Started", "Duration", "Verdict / progress", "Topics", "Records", "Clusters", "Links"]} label="Runs">
              {data.runs.map((run) => (
                <Table.Row data-run-id={run.run_id} key={run.run_id}>
                  <Table.Cell {...ID_CELL}>
                    <ChakraLink asChild>
                      <Link to={consoleRun(run.run_id)}>{run.run_id}</Link>
                    </ChakraLink>
                  </Table.Cell>
                  <Table.Cell>{run.kind}</Table.Cell>
                  <Table.Cell minW="11ch">{time(run.started_at)}</Table.Cell>
                  <Table.Cell textAlign="end">{seconds(run.duration_seconds)}</Table.Cell>
                  <Table.Cell>
                    <RunState run={run} />
                  </Table.Cell>
                  <Table.Cell textAlign="end">{run.topics}</Table.Cell>
                  <Table.Cell textAlign="end">{count(run.records)}</Table.Cell>
                  <Table.Cell {...ID_CELL}>{`${cluster(run.source_cluster_id, run.source_bootstrap, names(run.source_cluster_id))} → ${cluster(run.target_cluster_id, run.target_bootstrap, names(run.target_cluster_id))}`}</Table.Cell>
                  <Table.Cell>
                    <RunLinks run={run} />
                  </Table.Cell>
                </Table.Row>
              ))}
            </SimpleTable>
          )}
          <Pager limit={limit} offset={offset} onChange={(next) => set("offset", next ? String(next) : "")} total={data.total} />
        </>
      ) : undefined}
    </Box>
  );
};
