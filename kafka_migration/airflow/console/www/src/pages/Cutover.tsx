import { Box, Button, Dialog, Field, HStack, Input, Link as ChakraLink, List, Portal, Stack, Table, Text } from "@chakra-ui/react";
import { useState } from "react";
import { Link } from "react-router-dom";

import { cutoverReportUrl } from "../api/client";
import type { CutoverView } from "../api/types";
import { ErrorBox, Loading, Notice, Pager, Section, SimpleTable, StatusBadge } from "../components";
import { cluster, count, plural, time } from "../format";
import { consoleRun, dagPage, dagRun } from "../links";
import { useClusterNames, useCutovers, useDagDetails, usePreflight, useTriggerDag } from "../queries";

const FAILBACK_DAG = "kafka_failback";
const LIMIT = 5;

// A Param's default or title as a form field shows it: text as is, anything else (a number, a list) as JSON.
const asText = (value: unknown): string =>
  typeof value === "string" ? value : value === null || value === undefined ? "" : JSON.stringify(value);

const PreflightCheck = () => {
  const [form, setForm] = useState({ exclude: "", exclude_groups: "", groups: "", include: ".*", quiet_seconds: "5" });
  const [asked, setAsked] = useState<typeof form | null>(null);
  const names = useClusterNames();
  // Emptied fields are left out (the API's defaults apply); the seconds go as a number.
  const seconds = asked?.quiet_seconds.trim();
  const { data, error, isFetching } = usePreflight(asked && { ...asked, quiet_seconds: seconds ? Number(seconds) : undefined });
  const field = (key: keyof typeof form, label: string, help: string) => (
    <Field.Root width="auto">
      <Field.Label fontSize="sm">{label}</Field.Label>
      <Input aria-label={label} onChange={(e) => setForm({ ...form, [key]: e.currentTarget.value })} size="sm" value={form[key]} width="170px" />
      <Field.HelperText fontSize="xs">{help}</Field.HelperText>
    </Field.Root>
  );
  return (
    <Section title="Pre-flight (read only)">
      <Text fontSize="sm" mb={2}>
        What the kafka_cutover DAG checks before it switches: no selected source topic is written to, and no selected
        consumer group has members on either cluster. Nothing is recorded or switched here.
      </Text>
      <HStack align="start" as="form" gap={3} wrap="wrap" onSubmit={(e) => { e.preventDefault(); setAsked({ ...form }); }}>
        {field("include", "Include topics", "regular expression, full match")}
        {field("exclude", "Exclude topics", "empty: none")}
        {field("groups", "Consumer groups", "empty: every group")}
        {field("exclude_groups", "Exclude groups", "empty: none")}
        {field("quiet_seconds", "Watch for (s)", "0 to 30")}
        <Button loading={isFetching} mt={6} size="sm" type="submit">Check now</Button>
      </HStack>
      {error ? <ErrorBox error={error} /> : undefined}
      {data ? (
        <Box mt={3} data-testid="preflight-result">
          {data.ready ? (
            <Notice status="success" title="Ready: the topics are quiet and no selected group has members">
              {`${cluster(data.source.cluster_id, data.source.bootstrap, names(data.source.cluster_id) ?? data.source.conn_id)} → ${cluster(data.target.cluster_id, data.target.bootstrap, names(data.target.cluster_id) ?? data.target.conn_id)}, watched for ${data.quiet_seconds} s.`}
            </Notice>
          ) : (
            <Notice status="warning" title="Not ready: kafka_cutover would refuse now">
              <List.Root>
                {data.problems.map((p) => <List.Item key={p}>{p}</List.Item>)}
              </List.Root>
            </Notice>
          )}
          <SimpleTable headers={["Source topic", "Partitions", "Written during the check", "Open transactions", "Quiet"]} label="Pre-flight topics">
            {data.topics.map((t) => (
              <Table.Row data-topic={t.topic} key={t.topic}>
                <Table.Cell>{t.topic}</Table.Cell>
                <Table.Cell textAlign="end">{t.partitions}</Table.Cell>
                <Table.Cell textAlign="end">{count(t.new_offsets)}</Table.Cell>
                <Table.Cell>{t.open_transactions.length ? t.open_transactions.join(", ") : "none"}</Table.Cell>
                <Table.Cell><StatusBadge label={t.quiet ? "QUIET" : "WRITTEN TO"} status={t.quiet ? "verified" : "failed"} /></Table.Cell>
              </Table.Row>
            ))}
          </SimpleTable>
          <Box mt={3} />
          {data.groups.length === 0 ? (
            <Text fontSize="sm">No selected consumer group has committed offsets on these topics.</Text>
          ) : (
            <SimpleTable headers={["Consumer group", "On the source", "On the target"]} label="Pre-flight groups">
              {data.groups.map((g) => (
                <Table.Row data-group={g.group_id} key={g.group_id}>
                  <Table.Cell>{g.group_id}</Table.Cell>
                  {[g.source, g.target].map((side, i) => (
                    <Table.Cell key={i}>
                      <StatusBadge label={`${side.state} · ${plural(side.members, "member")}`} status={side.active ? "failed" : "verified"} />
                    </Table.Cell>
                  ))}
                </Table.Row>
              ))}
            </SimpleTable>
          )}
        </Box>
      ) : undefined}
    </Section>
  );
};

// kafka_failback's trigger form, its id filled in: the DAG's own Params (titles, defaults, schema) from Airflow's
// REST API, submitted to it (Airflow validates the conf against the same Param schemas as its own form).
const FailbackDialog = ({ cutover, onClose }: { readonly cutover: CutoverView; readonly onClose: () => void }) => {
  const details = useDagDetails(FAILBACK_DAG);
  const [values, setValues] = useState<Record<string, string>>({});
  const trigger = useTriggerDag(FAILBACK_DAG);
  const params = details.data?.params ?? {};
  const value = (name: string): string =>
    values[name] ?? (name === "cutover_id" ? cutover.cutover_id : asText(params[name]?.value));
  // As Airflow's form sends them: numbers as numbers, an emptied field as null.
  const conf = (): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(params).map(([name, p]) => {
        const raw = value(name).trim();
        const types = ([] as Array<unknown>).concat(p.schema.type);
        if (raw === "") return [name, null];
        return [name, types.includes("number") || types.includes("integer") ? Number(raw) : raw];
      }),
    );
  return (
    <Dialog.Root lazyMount onOpenChange={(e) => { if (!e.open) onClose(); }} open size="md">
      <Portal>
        <Dialog.Backdrop />
        <Dialog.Positioner>
          <Dialog.Content>
            <Dialog.Header>
              <Dialog.Title>Trigger {FAILBACK_DAG}</Dialog.Title>
            </Dialog.Header>
            <Dialog.Body>
              {details.isLoading ? <Loading /> : undefined}
              {details.error ? <ErrorBox error={details.error} /> : undefined}
              <Stack gap={3}>
                {Object.entries(params).map(([name, p]) => (
                  <Field.Root key={name} required={name === "cutover_id"}>
                    <Field.Label>{asText(p.schema.title) || name}</Field.Label>
                    <Input aria-label={asText(p.schema.title) || name} name={name} onChange={(e) => setValues({ ...values, [name]: e.currentTarget.value })} value={value(name)} />
                    {p.description ? <Field.HelperText>{p.description}</Field.HelperText> : undefined}
                  </Field.Root>
                ))}
              </Stack>
              {trigger.error ? <ErrorBox error={trigger.error} /> : undefined}
              {trigger.data ? (
                <Notice status="success" title={`Triggered: DAG run ${trigger.data.dag_run_id}`}>
                  <ChakraLink asChild><Link to={dagRun(FAILBACK_DAG, trigger.data.dag_run_id)}>Open the DAG run</Link></ChakraLink>
                </Notice>
              ) : undefined}
            </Dialog.Body>
            <Dialog.Footer>
              <ChakraLink asChild fontSize="sm"><Link to={dagPage(FAILBACK_DAG)}>{FAILBACK_DAG} in Airflow</Link></ChakraLink>
              <Button onClick={onClose} variant="outline">Close</Button>
              <Button disabled={!details.data || !value("cutover_id") || trigger.isPending || Boolean(trigger.data)} loading={trigger.isPending} onClick={() => trigger.mutate(conf())}>
                Trigger
              </Button>
            </Dialog.Footer>
          </Dialog.Content>
        </Dialog.Positioner>
      </Portal>
    </Dialog.Root>
  );
};

const CutoverCard = ({ cutover }: { readonly cutover: CutoverView }) => {
  const [failingBack, setFailingBack] = useState(false);
  const names = useClusterNames();
  return (
    <Section
      title={`Cutover ${cutover.cutover_id}`}
      actions={<StatusBadge status={cutover.status} />}
    >
      <Text fontSize="sm">
        {time(cutover.started_at)} · {cluster(cutover.source_cluster_id, cutover.source_bootstrap, names(cutover.source_cluster_id))} →{" "}
        {cluster(cutover.target_cluster_id, cutover.target_bootstrap, names(cutover.target_cluster_id))} · groups: {cutover.groups.join(", ") || "none"}
        {cutover.failback_status ? ` · failback ${cutover.failback_status}` : ""}
      </Text>
      <HStack fontSize="sm" gap={3} my={1} wrap="wrap">
        {cutover.dag_id && cutover.dag_run_id ? <ChakraLink asChild><Link to={dagRun(cutover.dag_id, cutover.dag_run_id)}>DAG run</Link></ChakraLink> : undefined}
        {cutover.run_id ? <ChakraLink asChild><Link to={consoleRun(cutover.run_id)}>Final run</Link></ChakraLink> : undefined}
        {cutover.failback_run_id ? <ChakraLink asChild><Link to={consoleRun(cutover.failback_run_id)}>Failback run</Link></ChakraLink> : undefined}
        <ChakraLink href={cutoverReportUrl(cutover.cutover_id)} rel="noreferrer" target="_blank">Cutover report</ChakraLink>
        {cutover.can_fail_back ? (
          <Button onClick={() => setFailingBack(true)} size="xs" variant="outline">Fail back this cutover…</Button>
        ) : undefined}
      </HStack>
      {cutover.message && cutover.status !== "completed" ? <Notice status="warning" title={cutover.message} /> : undefined}
      <List.Root gap={1} mt={2} variant="plain">
        {cutover.checklist.map((item) => (
          <List.Item data-done={String(item.done)} key={item.step}>
            <Text fontSize="sm">
              {item.done === true ? "☑" : item.done === false ? "☒" : "☐"} <b>{item.step}</b>: {item.detail}
            </Text>
          </List.Item>
        ))}
      </List.Root>
      {failingBack ? <FailbackDialog cutover={cutover} onClose={() => setFailingBack(false)} /> : undefined}
    </Section>
  );
};

export const CutoverPage = () => {
  const [offset, setOffset] = useState(0);
  const { data, error, isLoading } = useCutovers({ limit: LIMIT, offset });
  return (
    <Box>
      <PreflightCheck />
      <Section title="Cutovers">
        {isLoading ? <Loading /> : undefined}
        {error ? <ErrorBox error={error} /> : undefined}
        {data && data.cutovers.length === 0 ? <Notice status="info" title="No cutover yet">Trigger the kafka_cutover DAG when the pre-flight says ready.</Notice> : undefined}
        {data?.cutovers.map((c) => <CutoverCard cutover={c} key={c.cutover_id} />)}
        {data ? <Pager limit={LIMIT} offset={offset} onChange={setOffset} total={data.total} /> : undefined}
      </Section>
    </Box>
  );
};
