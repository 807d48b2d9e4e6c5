// Access syncs (ACL bindings, SCRAM users, client quotas): the list, and one sync as the sign-off report's
// security section tells it (the API reads that section, so page and report say the same).
import { Box, HStack, Link as ChakraLink, List, Table, Text } from "@chakra-ui/react";
import { Link, useParams } from "react-router-dom";

import { accessReportUrl } from "../api/client";
import type { AccessSyncDetailView } from "../api/types";
import { ErrorBox, Loading, Notice, Pager, Section, SimpleTable, StatusBadge } from "../components";
import { pageLimit, useUrlFilters } from "../filters";
import { cluster, count, plural, time } from "../format";
import { CONSOLE, consoleAccessSync } from "../links";
import { useAccessSync, useAccessSyncs, useClusterNames } from "../queries";

const LIMIT = 20;

// The verdict as the sync's report words it: both clusters decide alike (proven), or not.
const VERDICT_LABEL: Record<string, string> = { different: "NOT PROVEN", proven: "PROVEN" };
const VERDICT_STATUS: Record<string, string> = { different: "failed", proven: "verified" };
const ACTION_STATUS: Record<string, string> = {
  added: "completed",
  conflict: "failed",
  needs_password: "refused",
  different: "failed",
  present: "unchanged",
  refused: "refused",
  removed: "running",
  would_add: "would_sync",
  would_remove: "would_sync",
};

export const AccessVerdict = ({ verdict, dryRun }: { readonly verdict: string; readonly dryRun: boolean }) => (
  <HStack gap={1}>
    <StatusBadge label={VERDICT_LABEL[verdict] ?? verdict.toUpperCase()} status={VERDICT_STATUS[verdict] ?? verdict} />
    {dryRun ? <StatusBadge label="DRY RUN" status="dry_run" /> : undefined}
  </HStack>
);

const ActionBadge = ({ action }: { readonly action: string }) => (
  <StatusBadge label={action.replaceAll("_", " ").toUpperCase()} status={ACTION_STATUS[action] ?? action} />
);

export const AccessPage = () => {
  const [params, apply] = useUrlFilters();
  const offset = Number(params.get("offset") ?? 0);
  const limit = pageLimit(params, LIMIT, 200);
  const { data, error, isLoading } = useAccessSyncs({ limit, offset });
  const names = useClusterNames();

  return (
    <Box>
      {isLoading ? <Loading /> : undefined}
      {error ? <ErrorBox error={error} /> : undefined}
      {data && data.syncs.length === 0 ? (
        <Notice status="info" title="No access sync yet">
          Run kafka-migrate access sync or trigger kafka_migration_access: each sync carries the source&apos;s ACL
          bindings, SCRAM users and client quotas to the target and proves both clusters decide alike.
        </Notice>
      ) : undefined}
      {data && data.syncs.length > 0 ? (
        <SimpleTable headers={["Sync", "Synced", "Verdict", "Clusters", "Added", "Present", "Removed", "Refused", "Conflicts", "No password", "Quotas differ", "Probes differ"]} label="Access syncs">
          {data.syncs.map((s) => (
            <Table.Row data-sync-id={s.sync_id} key={s.sync_id}>
              <Table.Cell minW="230px" whiteSpace="normal" wordBreak="break-all">
                <ChakraLink asChild>
                  <Link to={consoleAccessSync(s.sync_id)}>{s.sync_id}</Link>
                </ChakraLink>
              </Table.Cell>
              <Table.Cell whiteSpace="nowrap">{time(s.synced_at)}</Table.Cell>
              <Table.Cell><AccessVerdict dryRun={s.dry_run} verdict={s.verdict} /></Table.Cell>
              <Table.Cell fontSize="xs">
                <Text>{cluster(s.source.cluster_id, s.source.bootstrap, names(s.source.cluster_id))}</Text>
                <Text>{`→ ${cluster(s.target.cluster_id, s.target.bootstrap, names(s.target.cluster_id))}`}</Text>
              </Table.Cell>
              <Table.Cell textAlign="end">{count(s.totals.added)}</Table.Cell>
              <Table.Cell textAlign="end">{count(s.totals.present)}</Table.Cell>
              <Table.Cell textAlign="end">{count(s.totals.removed)}</Table.Cell>
              <Table.Cell textAlign="end">{count(s.totals.refused)}</Table.Cell>
              <Table.Cell textAlign="end">{count(s.totals.conflict)}</Table.Cell>
              <Table.Cell>{s.needs_password.length ? s.needs_password.join(", ") : "–"}</Table.Cell>
              <Table.Cell textAlign="end">{count(s.quota_differences)}</Table.Cell>
              <Table.Cell textAlign="end">{count(s.probe_mismatches)}</Table.Cell>
            </Table.Row>
          ))}
        </SimpleTable>
      ) : undefined}
      {data ? <Pager limit={limit} offset={offset} onChange={(next) => apply("offset", next ? String(next) : "")} total={data.total} /> : undefined}
    </Box>
  );
};

// What a reader should look at, from the section itself (the sync's own verdict weighs these).
const attention = (sync: AccessSyncDetailView): Array<string> => {
  const conflicts = sync.counts.reduce((n, c) => n + c.conflict, 0);
  const failedLogins = sync.users.filter((u) => u.login !== null && u.login !== "proven").map((u) => u.user);
  const [unreadableSource, unreadableTarget] = sync.decision_check.unreadable;
  return [
    sync.decision_check.differences.length ? plural(sync.decision_check.differences.length, "decision differs", "decisions differ") : "",
    conflicts ? plural(conflicts, "binding on the target only conflicts", "bindings on the target only conflict") : "",
    unreadableSource + unreadableTarget ? `${count(unreadableSource + unreadableTarget)} bindings could not be read` : "",
    sync.needs_password.length ? `${plural(sync.needs_password.length, "user needs", "users need")} a password` : "",
    failedLogins.length ? `login to the target failed: ${failedLogins.join(", ")}` : "",
    sync.probes.mismatches.length ? plural(sync.probes.mismatches.length, "live probe answered", "live probes answered") + " differently" : "",
    sync.quota_differences ? plural(sync.quota_differences, "client quota differs", "client quotas differ") : "",
  ].filter((line) => line);
};

const Banner = ({ sync }: { readonly sync: AccessSyncDetailView }) => {
  const check = sync.decision_check;
  const proven = sync.verdict === "proven";
  const label = VERDICT_LABEL[sync.verdict] ?? sync.verdict.toUpperCase();
  const title = `${label}${sync.dry_run ? " (dry run: nothing was written)" : ""}`;
  const look = attention(sync);
  return (
    <Box data-testid="access-verdict">
      <Notice status={proven ? "success" : "error"} title={title}>
        {`Decision check: ${plural(check.actions_checked, "action")} decided by both clusters' rules, ${plural(check.differences.length, "difference")}; bindings neither could read: ${check.unreadable[0]} on the source, ${check.unreadable[1]} on the target.`}
        {look.length ? ` To look at: ${look.join("; ")}.` : ""}
      </Notice>
    </Box>
  );
};

const AccessSyncDetails = ({ sync }: { readonly sync: AccessSyncDetailView }) => {
  const differences = sync.decision_check?.differences ?? [];
  const names = useClusterNames();
  return (
    <Box data-testid="access-sync-view">
      <Text fontSize="lg" fontWeight={700}>Access sync {sync.sync_id}</Text>
      <Text fontSize="sm" mb={2}>
        {time(sync.synced_at)} · {cluster(sync.source.cluster_id, sync.source.bootstrap, names(sync.source.cluster_id))} →{" "}
        {cluster(sync.target.cluster_id, sync.target.bootstrap, names(sync.target.cluster_id))}
      </Text>
      <Banner sync={sync} />
      {differences.length ? (
        <Section title="Decisions that differ">
          <List.Root fontSize="sm" data-testid="decision-differences">
            {differences.map((d) => <List.Item key={d}>{d}</List.Item>)}
          </List.Root>
        </Section>
      ) : undefined}
      {sync.needs_password.length ? (
        <Box data-testid="needs-password">
          <Notice status="warning" title={`${plural(sync.needs_password.length, "user needs", "users need")} a password: ${sync.needs_password.join(", ")}`}>
            Not created on the target: give each user&apos;s password (--credentials, or the DAG&apos;s credentials
            connection) and sync again.
          </Notice>
        </Box>
      ) : undefined}
      {sync.probes.mismatches.length ? (
        <Box data-testid="probe-mismatches">
          <Notice status="error" title={`${plural(sync.probes.mismatches.length, "live probe")} answered differently by the target`}>
            <List.Root>{sync.probes.mismatches.map((m) => <List.Item key={m}>{m}</List.Item>)}</List.Root>
          </Notice>
        </Box>
      ) : undefined}
      <Section title="Bindings per resource type and pattern">
        <SimpleTable headers={["Resource type", "Pattern", "Added", "Present", "Removed", "Refused", "Conflicts"]} label="Counts">
          {sync.counts.map((c) => (
            <Table.Row key={`${c.resource_type}-${c.pattern_type}`}>
              <Table.Cell>{c.resource_type}</Table.Cell>
              <Table.Cell>{c.pattern_type}</Table.Cell>
              <Table.Cell textAlign="end">{count(c.added)}</Table.Cell>
              <Table.Cell textAlign="end">{count(c.present)}</Table.Cell>
              <Table.Cell textAlign="end">{count(c.removed)}</Table.Cell>
              <Table.Cell textAlign="end">{count(c.refused)}</Table.Cell>
              <Table.Cell textAlign="end">{count(c.conflict)}</Table.Cell>
            </Table.Row>
          ))}
        </SimpleTable>
      </Section>
      <Section title={`Bindings (${count(sync.bindings.length)})`}>
        <SimpleTable headers={["Action", "Binding", "Why"]} label="Bindings">
          {sync.bindings.map((b, i) => (
            <Table.Row data-action={b.action} key={`${i}-${b.binding}`}>
              <Table.Cell><ActionBadge action={b.action} /></Table.Cell>
              <Table.Cell fontFamily="mono" fontSize="xs">{b.binding}</Table.Cell>
              <Table.Cell fontSize="xs" maxW="320px">{b.reason ?? ""}</Table.Cell>
            </Table.Row>
          ))}
        </SimpleTable>
      </Section>
      <Section title={`SCRAM users (${count(sync.users.length)})`}>
        <SimpleTable headers={["User", "Mechanism", "Iterations", "Action", "Login to the target", "Why"]} label="Users">
          {sync.users.map((u) => (
            <Table.Row data-user={u.user} key={`${u.user}-${u.mechanism}`}>
              <Table.Cell>{u.user}</Table.Cell>
              <Table.Cell>{u.mechanism}</Table.Cell>
              <Table.Cell textAlign="end">{count(u.iterations)}</Table.Cell>
              <Table.Cell><ActionBadge action={u.action} /></Table.Cell>
              <Table.Cell>{u.login ?? "–"}</Table.Cell>
              <Table.Cell fontSize="xs" maxW="320px">{u.reason ?? ""}</Table.Cell>
            </Table.Row>
          ))}
        </SimpleTable>
      </Section>
      <Section title={`Client quotas (${plural(sync.quota_differences, "difference")})`}>
        <SimpleTable headers={["Entity", "Key", "Source", "Target before", "Action", "Why"]} label="Quotas">
          {sync.quotas.map((q) => (
            <Table.Row data-action={q.action} key={`${q.entity}-${q.key}`}>
              <Table.Cell>{q.entity}</Table.Cell>
              <Table.Cell>{q.key}</Table.Cell>
              <Table.Cell textAlign="end">{count(q.value)}</Table.Cell>
              <Table.Cell textAlign="end">{count(q.target_value)}</Table.Cell>
              <Table.Cell><ActionBadge action={q.action} /></Table.Cell>
              <Table.Cell fontSize="xs" maxW="320px">{q.reason ?? ""}</Table.Cell>
            </Table.Row>
          ))}
        </SimpleTable>
      </Section>
      <Section title="Live probes">
        <Text fontSize="sm">
          {plural(sync.probes.total, "probe")}, {count(sync.probes.matched)} answered alike by both clusters
        </Text>
      </Section>
      <Section title="Report">
        {sync.report.files.length ? (
          <HStack gap={3} fontSize="sm" data-testid="access-report">
            {sync.report.files.map((fmt) => (
              <ChakraLink href={accessReportUrl(sync.sync_id, fmt)} key={fmt} rel="noreferrer" target="_blank">
                {`report.${fmt}`}
              </ChakraLink>
            ))}
            <Text color="fg.muted" fontFamily="mono" fontSize="xs">{sync.report.directory}</Text>
            {sync.report_sha256 ? <Text fontFamily="mono" fontSize="xs">{`sha256 ${sync.report_sha256.slice(0, 12)}`}</Text> : undefined}
          </HStack>
        ) : (
          <Text fontSize="sm">{sync.dry_run ? "A dry run writes no report." : `No report file in ${sync.report.directory}.`}</Text>
        )}
      </Section>
      <Text fontSize="sm">
        <ChakraLink asChild><Link to={`${CONSOLE}/access`}>All access syncs</Link></ChakraLink>
      </Text>
    </Box>
  );
};

export const AccessSyncPage = () => {
  const { syncId = "" } = useParams();
  const { data, error, isLoading } = useAccessSync(syncId);
  if (isLoading) return <Loading />;
  if (error) return <ErrorBox error={error} />;
  return data ? <AccessSyncDetails sync={data} /> : null;
};
