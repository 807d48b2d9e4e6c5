import { Box, HStack, Input, Button, Table, Text } from "@chakra-ui/react";
import { useState } from "react";

import { ErrorBox, Loading, Notice, Pager, Section, SimpleTable, StatusBadge } from "../components";
import { pageLimit, useUrlFilters } from "../filters";
import { cluster, count, plural, time } from "../format";
import { useClusterNames, useGroupSyncs } from "../queries";

const LIMIT = 5;

export const GroupsPage = () => {
  const [params, apply] = useUrlFilters();
  const offset = Number(params.get("offset") ?? 0);
  const limit = pageLimit(params, LIMIT, 50);
  const [group, setGroup] = useState(params.get("group_id") ?? "");
  const names = useClusterNames();
  const { data, error, isLoading } = useGroupSyncs({ group_id: params.get("group_id"), limit, offset, run_id: params.get("run_id") });

  return (
    <Box>
      <HStack as="form" gap={2} mb={3} onSubmit={(e) => { e.preventDefault(); apply("group_id", group.trim()); }}>
        <Input aria-label="Consumer group" onChange={(e) => setGroup(e.currentTarget.value)} placeholder="Consumer group" size="sm" value={group} width="220px" />
        <Button size="sm" type="submit">Filter</Button>
        {params.get("run_id") ? <Text fontSize="sm">syncs of run {params.get("run_id")}</Text> : undefined}
      </HStack>
      {isLoading ? <Loading /> : undefined}
      {error ? <ErrorBox error={error} /> : undefined}
      {data && data.syncs.length === 0 ? (
        <Notice status="info" title="No consumer group sync yet">
          Trigger kafka_migration or kafka_nightly_sync with "Sync consumer groups" on, or run a cutover: each sync
          translates the source groups' committed offsets to the target, with proof.
        </Notice>
      ) : undefined}
      {data?.syncs.map((sync) => (
        <Section
          key={sync.sync_id}
          title={`Sync ${sync.sync_id}`}
          actions={<StatusBadge label={sync.not_ok ? `${sync.not_ok} NOT OK` : "ALL PROVEN"} status={sync.not_ok ? "failed" : "verified"} />}
        >
          <Text fontSize="sm" mb={2}>
            {time(sync.synced_at)} · {cluster(sync.source_cluster_id, null, names(sync.source_cluster_id))} →{" "}
            {cluster(sync.target_cluster_id, null, names(sync.target_cluster_id))} · {plural(sync.groups, "group")},{" "}
            {plural(sync.partitions, "partition")}{sync.run_id ? ` · run ${sync.run_id}` : ""}
          </Text>
          <SimpleTable headers={["Group", "Partition", "Source offset", "Lag on source", "Target partition", "Target offset", "Before", "Proof", "Outcome", "Why"]} label={`Sync ${sync.sync_id}`}>
            {sync.rows.map((r) => (
              <Table.Row data-group={r.group_id} key={`${r.group_id}-${r.source_topic}-${r.partition}`}>
                <Table.Cell>{r.group_id}</Table.Cell>
                <Table.Cell>{`${r.source_topic}[${r.partition}]`}</Table.Cell>
                <Table.Cell textAlign="end">{count(r.source_offset)}</Table.Cell>
                <Table.Cell textAlign="end">{count(r.lag)}</Table.Cell>
                <Table.Cell>{r.target_topic ? `${r.target_topic}[${r.partition}]` : "–"}</Table.Cell>
                <Table.Cell textAlign="end">{count(r.target_offset)}</Table.Cell>
                <Table.Cell textAlign="end">{count(r.previous_target_offset)}</Table.Cell>
                <Table.Cell>{(r.proof ?? "–").replaceAll("_", " ")}</Table.Cell>
                <Table.Cell><StatusBadge status={r.outcome} /></Table.Cell>
                <Table.Cell fontSize="xs" maxW="260px">{r.reason ?? ""}</Table.Cell>
              </Table.Row>
            ))}
          </SimpleTable>
        </Section>
      ))}
      {data ? <Pager limit={limit} offset={offset} onChange={(next) => apply("offset", next ? String(next) : "")} total={data.total} /> : undefined}
    </Box>
  );
};
