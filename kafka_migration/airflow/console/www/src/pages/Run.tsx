import { Box, HStack, Heading, Link as ChakraLink, Stack, Table, Text } from "@chakra-ui/react";
import { Link, useParams } from "react-router-dom";

import { ApiError } from "../api/client";
import type { RunDetailView, TimingsView } from "../api/types";
import { RatesChart } from "../charts";
import { ErrorBox, Loading, Notice, ProgressLine, Section, SimpleTable, StatusBadge } from "../components";
import { cluster, count, plural, range, rate, seconds, shortChecksum, time } from "../format";
import { CONSOLE } from "../links";
import { useClusterNames, useDagRunRun, useRun } from "../queries";
import { ratesOf, useProgressSamples } from "../samples";
import { RunLinks, RunState } from "./Runs";
import { RunSchemas } from "./RunSchemas";

const TIMING_PARTS: Array<[keyof TimingsView, string]> = [
  ["plan", "planning"],
  ["startup", "Spark start-up"],
  ["copy", "copy"],
  ["verify", "verification"],
  ["bookkeeping", "bookkeeping"],
];

const WhereTheTimeWent = ({ timings }: { readonly timings: TimingsView | null }) => {
  if (!timings) return <Text fontSize="sm">Not measured (the run is running, or older than the timings).</Text>;
  return (
    <Stack gap={1} maxW="520px" data-testid="timings">
      <Text fontSize="sm">Wall time {seconds(timings.wall)}</Text>
      {TIMING_PARTS.map(([key, label]) => (
        <HStack gap={3} key={key}>
          <Text fontSize="sm" w="130px">{label}</Text>
          <ProgressLine done={timings[key]} label={label} planned={timings.wall} />
          <Text fontSize="sm">
            {seconds(timings[key])}
            {key === "verify" && timings.overlap > 0 ? ` (${seconds(timings.overlap)} of it during the copy)` : ""}
          </Text>
        </HStack>
      ))}
    </Stack>
  );
};

const LiveProgress = ({ detail }: { readonly detail: RunDetailView }) => {
  const progress = detail.progress;
  if (!progress) return null;
  return (
    <Section title="Live progress">
      <Text fontSize="sm" mb={2} data-testid="live-phase">
        {progress.phase}
        {progress.updated ? ` · snapshot ${seconds(progress.age_seconds)} old` : ""}
        {progress.stale ? " · no news from the Spark driver for 30 s: it may have stopped (see the Spark logs)" : ""}
      </Text>
      <SimpleTable headers={["Topic", "Partition", "Planned", "Copied", "Verified", "Rate", "Time left"]} label="Live progress">
        {progress.partitions.map((p) => (
          <Table.Row data-partition={`${p.topic}[${p.partition}]`} key={`${p.topic}-${p.partition}`}>
            <Table.Cell>{p.topic}</Table.Cell>
            <Table.Cell textAlign="end">{p.partition}</Table.Cell>
            <Table.Cell textAlign="end">{count(p.planned)}</Table.Cell>
            <Table.Cell>
              <HStack>
                <ProgressLine done={p.copy.done} label={`copied ${p.topic}[${p.partition}]`} planned={p.planned} />
                <Text fontSize="xs">{`${count(p.copy.done)} of ${count(p.planned)}`}</Text>
              </HStack>
            </Table.Cell>
            <Table.Cell>{`${count(p.verify.done)} of ${count(p.planned)}`}</Table.Cell>
            <Table.Cell>{rate(p.copy.rate)}</Table.Cell>
            <Table.Cell>{p.copy.finished ? "done" : p.copy.eta_seconds === null ? "–" : seconds(p.copy.eta_seconds)}</Table.Cell>
          </Table.Row>
        ))}
      </SimpleTable>
    </Section>
  );
};

const RunDetails = ({ detail }: { readonly detail: RunDetailView }) => {
  const { run } = detail;
  const names = useClusterNames();
  const rates = ratesOf(useProgressSamples(run.run_id));
  const running = run.status === "running";
  return (
    <Box data-testid="run-view">
      <HStack gap={3} mb={1} wrap="wrap">
        <Heading size="lg" wordBreak="break-all">{run.run_id}</Heading>
        <RunState run={run} />
      </HStack>
      <Text fontSize="sm" mb={1} data-testid="run-summary">
        {run.kind} · {cluster(run.source_cluster_id, run.source_bootstrap, names(run.source_cluster_id))} →{" "}
        {cluster(run.target_cluster_id, run.target_bootstrap, names(run.target_cluster_id))} · started {time(run.started_at)}
        {run.ended_at ? ` · ended ${time(run.ended_at)}` : ""} · {plural(run.topics, "topic")}, {plural(run.records, "record")} copied
        {run.status === "running" ? " so far" : ""}
      </Text>
      {run.cutover_id ? <Text fontSize="sm">Part of cutover {run.cutover_id} (<ChakraLink asChild><Link to={`${CONSOLE}/cutover`}>Cutover view</Link></ChakraLink>)</Text> : undefined}
      <RunLinks run={run} />
      {run.message ? <Notice status={run.status === "verified" || run.status === "up_to_date" ? "info" : "warning"} title={run.message} /> : undefined}
      {detail.warnings.map((w) => (
        <Notice key={w} status="warning" title={w} />
      ))}
      <Box mt={4} />
      {running || rates.length ? (
        <Section title="Copy and verify rates">
          <Text color="fg.muted" fontSize="xs" mb={2}>
            Records per second between the Spark driver's snapshots (2 s apart), since this page first saw the run
            {running ? "" : " while it ran"}.
          </Text>
          <RatesChart points={rates} running={running} />
        </Section>
      ) : undefined}
      <LiveProgress detail={detail} />
      <Section title="Where the time went">
        <WhereTheTimeWent timings={run.timings} />
      </Section>
      <Section title="Partitions">
        <SimpleTable
          headers={["Source", "Source range", "Target", "Target range", "Copied", "Records source / target", "Checksum source / target", "Verdict", "First difference", "Copy", "Verify"]}
          label="Partitions"
        >
          {detail.segments.map((s) => (
            <Table.Row data-partition={`${s.source_topic}[${s.partition}]`} key={`${s.source_topic}-${s.partition}`}>
              <Table.Cell>{`${s.source_topic}[${s.partition}]`}</Table.Cell>
              <Table.Cell whiteSpace="nowrap">{range(s.source_start, s.source_end)}</Table.Cell>
              <Table.Cell>{`${s.target_topic}[${s.partition}]`}</Table.Cell>
              <Table.Cell whiteSpace="nowrap">{range(s.target_start, s.target_end)}</Table.Cell>
              <Table.Cell textAlign="end">{count(s.copied_records)}</Table.Cell>
              <Table.Cell textAlign="end">{`${count(s.source_records)} / ${count(s.target_records)}`}</Table.Cell>
              <Table.Cell fontFamily="mono" fontSize="xs" title={`${s.source_checksum ?? ""} ${s.target_checksum ?? ""}`}>
                {`${shortChecksum(s.source_checksum)} / ${shortChecksum(s.target_checksum)}`}
              </Table.Cell>
              <Table.Cell><StatusBadge status={s.status} /></Table.Cell>
              <Table.Cell fontSize="xs" maxW="260px">
                {s.first_difference
                  ? `${s.first_difference} (source offset ${count(s.first_source_offset)}, target offset ${count(s.first_target_offset)})`
                  : s.error ?? "–"}
              </Table.Cell>
              <Table.Cell textAlign="end">{seconds(s.copy_seconds)}</Table.Cell>
              <Table.Cell textAlign="end">{seconds(s.verify_seconds)}</Table.Cell>
            </Table.Row>
          ))}
        </SimpleTable>
      </Section>
      <RunSchemas runId={run.run_id} running={running} />
      {detail.group_syncs.length ? (
        <Text fontSize="sm">
          Consumer group syncs of this run: {detail.group_syncs.join(", ")} (
          <ChakraLink asChild><Link to={`${CONSOLE}/groups?run_id=${encodeURIComponent(run.run_id)}`}>show</Link></ChakraLink>)
        </Text>
      ) : undefined}
    </Box>
  );
};

export const RunPage = () => {
  const { migrationRunId = "" } = useParams();
  const { data, error, isLoading } = useRun(migrationRunId);
  if (isLoading) return <Loading />;
  if (error) return <ErrorBox error={error} />;
  return data ? <RunDetails detail={data} /> : null;
};

export const DagRunTab = ({ dagId, dagRunId }: { readonly dagId: string; readonly dagRunId: string }) => {
  const { data, error, isLoading } = useDagRunRun(dagId, dagRunId);
  return (
    <Box p={4} data-testid="kafka-console">
      {isLoading ? <Loading /> : undefined}
      {error instanceof ApiError && error.status === 404 ? (
        <Notice status="info" title="No migration run for this DAG run">{error.message}</Notice>
      ) : error ? (
        <ErrorBox error={error} />
      ) : undefined}
      {data ? <RunDetails detail={data} /> : undefined}
      <Text fontSize="sm" mt={4}>
        <ChakraLink asChild><Link to={CONSOLE}>All Kafka migrations</Link></ChakraLink>
      </Text>
    </Box>
  );
};
