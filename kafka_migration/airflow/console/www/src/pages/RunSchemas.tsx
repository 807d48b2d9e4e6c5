// A run's schemas (--schema-ids, Param schema_ids): the registries, every subject version with what the run did,
// the id map, and the keys and values translated per partition; as the sign-off report's Schemas section (the API
// reads it through the report's own code). Nothing for a run that moved no schemas.
import { Table, Text } from "@chakra-ui/react";

import type { SchemaCountView } from "../api/types";
import { ErrorBox, Section, SimpleTable } from "../components";
import { count, plural } from "../format";
import { useRunSchemas } from "../queries";

const level = (value: string | null, isGlobal: boolean): string => (value === null ? "unknown" : isGlobal ? `${value} (global)` : value);

const outcomes = (c: SchemaCountView): string =>
  `${count(c.translated)} / ${count(c.unchanged)} / ${count(c.without_header)}`;

export const RunSchemas = ({ runId, running }: { readonly runId: string; readonly running: boolean }) => {
  const { data, error } = useRunSchemas(runId, running);
  if (error) return <ErrorBox error={error} />;
  if (!data) return null;
  const subjects = new Set(data.versions.map((v) => v.target_subject));
  return (
    <Section title="Schemas">
      <Text fontSize="sm" mb={2} data-testid="schemas-summary">
        Schema ids {data.mode === "keep" ? "kept" : "translated"} from {data.source_registry} to {data.target_registry}:{" "}
        {plural(subjects.size, "subject")}, {plural(data.versions.length, "version")}, {plural(data.id_map.length, "id")} mapped;{" "}
        {count(data.totals.keys.translated)} keys and {count(data.totals.values.translated)} values translated and proven record by record.
      </Text>
      <SimpleTable headers={["Subject", "Version", "From subject", "Format", "Source id", "Target id", "Action", "Fingerprint"]} label="Subject versions">
        {data.versions.map((v) => (
          <Table.Row data-subject-version={`${v.target_subject} v${v.version}`} key={`${v.target_subject}-${v.version}`}>
            <Table.Cell fontFamily="mono" fontSize="xs">{v.target_subject}</Table.Cell>
            <Table.Cell textAlign="end">{v.target_version !== null && v.target_version !== v.version ? `${v.version} (target ${v.target_version})` : v.version}</Table.Cell>
            <Table.Cell fontFamily="mono" fontSize="xs">{v.source_subject === v.target_subject ? "–" : v.source_subject}</Table.Cell>
            <Table.Cell>{v.format}</Table.Cell>
            <Table.Cell textAlign="end">{v.source_id}</Table.Cell>
            <Table.Cell textAlign="end">{v.target_id ?? "on register"}</Table.Cell>
            <Table.Cell>{v.action.replace("_", " ")}</Table.Cell>
            <Table.Cell fontFamily="mono" fontSize="xs" title={v.fingerprint ?? ""}>{v.fingerprint ? v.fingerprint.slice(0, 19) : "–"}</Table.Cell>
          </Table.Row>
        ))}
      </SimpleTable>
      {data.compatibility.length ? (
        <>
          <Text fontSize="sm" mt={4} mb={2}>Compatibility of each subject when the run planned: its own level, or the registry's global one.</Text>
          <SimpleTable headers={["Subject", "On the source", "On the target"]} label="Compatibility">
            {data.compatibility.map((c) => (
              <Table.Row data-compatibility={c.target_subject} key={c.target_subject}>
                <Table.Cell fontFamily="mono" fontSize="xs">{c.target_subject}</Table.Cell>
                <Table.Cell>{level(c.source, c.source_global)}</Table.Cell>
                <Table.Cell color={c.source !== null && c.target !== null && c.source !== c.target ? "fg.warning" : undefined}>
                  {level(c.target, c.target_global)}
                </Table.Cell>
              </Table.Row>
            ))}
          </SimpleTable>
        </>
      ) : undefined}
      <Text fontSize="sm" mt={4} mb={2}>Id map: each source id and the target id of the same schema.</Text>
      <SimpleTable headers={["Source id", "Target id", "Format"]} label="Id map">
        {data.id_map.map((pair) => (
          <Table.Row data-id-pair={`${pair.source}->${pair.target}`} key={pair.source}>
            <Table.Cell textAlign="end">{pair.source}</Table.Cell>
            <Table.Cell textAlign="end">{pair.target}</Table.Cell>
            <Table.Cell>{pair.format}</Table.Cell>
          </Table.Row>
        ))}
      </SimpleTable>
      {data.partitions.length ? (
        <>
          <Text fontSize="sm" mt={4} mb={2}>Keys and values per partition: translated / unchanged (an id the map lacks, passed) / without a header.</Text>
          <SimpleTable headers={["Partition", "Keys", "Values"]} label="Translated per partition">
            {data.partitions.map((p) => (
              <Table.Row data-schema-partition={`${p.source_topic}[${p.partition}]`} key={`${p.source_topic}-${p.partition}`}>
                <Table.Cell>{`${p.source_topic}[${p.partition}]`}</Table.Cell>
                <Table.Cell>{outcomes(p.keys)}</Table.Cell>
                <Table.Cell>{outcomes(p.values)}</Table.Cell>
              </Table.Row>
            ))}
          </SimpleTable>
        </>
      ) : undefined}
    </Section>
  );
};
