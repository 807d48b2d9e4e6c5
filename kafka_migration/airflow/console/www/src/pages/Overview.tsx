import { Box, Link as ChakraLink, Table, Text } from "@chakra-ui/react";
import { Link } from "react-router-dom";

import { LagChart } from "../charts";
import { ErrorBox, ID_CELL, Loading, Notice, Section, SimpleTable } from "../components";
import { age, cluster, count, plural, time } from "../format";
import { consoleRun } from "../links";
import { useClusterNames, useClusters, useLagHistory, useOverview } from "../queries";

export const OverviewPage = () => {
  const { data, error, isLoading } = useOverview();
  const names = useClusterNames();
  const problems = useClusters().data?.problems ?? [];
  const history = useLagHistory().data;

  if (isLoading) return <Loading />;
  if (error) return <ErrorBox error={error} />;
  if (!data || data.pairs.length === 0) {
    return (
      <Notice status="info" title="No migration runs yet">
        Trigger the kafka_migration DAG (its defaults copy every topic from kafka_source to kafka_target); its run
        appears here.
      </Notice>
    );
  }

  return (
    <Box>
      {data.running > 0 ? (
        <Notice status="info" title={`${plural(data.running, "run")} running now`}>
          <ChakraLink asChild>
            <Link to="/plugin/kafka-migrations/runs?status=running">Watch the progress</Link>
          </ChakraLink>
        </Notice>
      ) : undefined}
      {problems.length ? (
        <Notice status="warning" title="Some cluster names could not be read">
          {problems.join(" ")}
        </Notice>
      ) : undefined}
      {data.pairs.map((pair) => (
        <Section key={`${pair.source_cluster_id}>${pair.target_cluster_id}`} title={`${cluster(pair.source_cluster_id, null, names(pair.source_cluster_id))} → ${cluster(pair.target_cluster_id, null, names(pair.target_cluster_id))}`}>
          <Text fontSize="sm" mb={2}>
            {pair.source_bootstrap} → {pair.target_bootstrap} · {plural(pair.runs, "run")}, the last started{" "}
            {time(pair.last_started_at)} ·{" "}
            <b data-testid="pair-lag">
              {pair.lag === null ? "not migrated yet: unknown (source not read)" : `${count(pair.lag)} offsets not migrated yet`}
            </b>
          </Text>
          {pair.source_reachable ? undefined : (
            <Notice status="warning" title="Source cluster unreachable">
              {pair.source_error}
            </Notice>
          )}
          {pair.lost ? (
            <Notice status="error" title={`The target LOST ${count(pair.lost)} verified records`}>
              <span data-testid="pair-lost">
                The target's log start moved past {plural(pair.lost, "record")} that earlier runs verified and the
                source still holds (see "Lost" below). Offsets cannot be re-created: re-migrate those topics to new
                target topics (rename), or accept the loss with a run's accept_target_loss. Find what deleted them
                first: the target topic's retention, DeleteRecords, a replica lost without its data.
              </span>
            </Notice>
          ) : undefined}
          {pair.lost_error ? (
            <Text color="fg.muted" fontSize="xs" mb={2}>
              Whether the target still holds what was verified could not be checked: {pair.lost_error}
            </Text>
          ) : undefined}
          <SimpleTable
            headers={["Source topic", "Target topic", "Partitions", "Migrated up to", "Source end now", "Not migrated yet", "Lost", "Last verified run", "Age"]}
            label={`Topics from ${pair.source_cluster_id} to ${pair.target_cluster_id}`}
          >
            {pair.topics.map((t) => (
              <Table.Row key={t.source_topic} data-topic={t.source_topic}>
                <Table.Cell>{t.source_topic}</Table.Cell>
                <Table.Cell>{t.target_topic}</Table.Cell>
                <Table.Cell textAlign="end">{t.partitions}</Table.Cell>
                <Table.Cell textAlign="end">{count(t.migrated)}</Table.Cell>
                <Table.Cell textAlign="end">{t.source_end === null ? "unreachable" : count(t.source_end)}</Table.Cell>
                <Table.Cell textAlign="end" fontWeight={t.lag ? 700 : 400}>
                  {t.lag === null ? "–" : count(t.lag)}
                </Table.Cell>
                <Table.Cell textAlign="end" color={t.lost ? "fg.error" : undefined} fontWeight={t.lost ? 700 : 400}>
                  {t.lost === null ? "–" : t.lost ? `${count(t.lost)} LOST` : "0"}
                </Table.Cell>
                <Table.Cell {...ID_CELL}>
                  <ChakraLink asChild>
                    <Link to={consoleRun(t.last_run_id)}>{t.last_run_id}</Link>
                  </ChakraLink>
                </Table.Cell>
                <Table.Cell>{age(t.age_seconds)}</Table.Cell>
              </Table.Row>
            ))}
          </SimpleTable>
          <Text color="fg.muted" fontSize="xs" mt={1}>
            Offsets summed over each topic's partitions; "not migrated yet" is what the next kafka_nightly_sync run
            copies and verifies. "Lost": verified records the target no longer holds although the source still does,
            checked now as every run checks it.
          </Text>
          <Text fontSize="sm" fontWeight={600} mb={1} mt={4}>Not migrated yet, run after run</Text>
          <Text color="fg.muted" fontSize="xs" mb={2}>
            At each run's start, the records past the checkpoints up to the source's end as the run found it (what it
            set out to copy, over the topics it selected); at its end, those it did not verify. The newest {history?.limit ?? 60} runs.
          </Text>
          <LagChart
            pair={`${cluster(pair.source_cluster_id, null, names(pair.source_cluster_id))} → ${cluster(pair.target_cluster_id, null, names(pair.target_cluster_id))}`}
            runs={history?.pairs.find((h) => h.source_cluster_id === pair.source_cluster_id && h.target_cluster_id === pair.target_cluster_id)?.runs ?? []}
          />
        </Section>
      ))}
    </Box>
  );
};
