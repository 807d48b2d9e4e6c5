// The console's two charts, drawn with Chakra UI's charts (@chakra-ui/charts, on Recharts) in the host's theme: not
// migrated yet run after run (the overview), and a running run's copy and verify rates (its page). Each stands beside
// a table of the points it draws, so that the numbers can be read (and are, by a screen reader and the browser tests)
// without the picture.
import { Chart, useChart } from "@chakra-ui/charts";
import { Box, Grid, Link as ChakraLink, Table, Text } from "@chakra-ui/react";
import type { ReactNode } from "react";
import { Link } from "react-router-dom";
import { CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";

import type { RunLagView } from "./api/types";
import { count, rate, time } from "./format";
import { consoleRun } from "./links";
import type { RatePoint } from "./samples";

const clock = (at: number): string => new Date(at).toISOString().slice(11, 19);
const day = (at: number): string => new Date(at).toISOString().slice(5, 16).replace("T", " ");
// The chart's colour for a token of the theme (useChart types it as any).
const paint = (chart: { color: (token: string | undefined) => unknown }, token: string | undefined): string => String(chart.color(token));
const compact = (value: number): string => new Intl.NumberFormat("en-US", { notation: "compact" }).format(value);

// A chart and, beside it, its points as a table in a frame of its own height (the newest first).
const ChartWithTable = ({ chart, table, testId }: { readonly chart: ReactNode; readonly table: ReactNode; readonly testId: string }) => (
  <Grid alignItems="start" data-testid={testId} gap={4} mb={3} templateColumns={{ base: "1fr", lg: "3fr 2fr" }}>
    <Box minW={0}>{chart}</Box>
    <Box borderWidth="1px" maxH="240px" overflowY="auto" rounded="md">
      {table}
    </Box>
  </Grid>
);

type LagPoint = { at: number; records: number; label: string };

/** Two points a run: what was not migrated yet when it planned, and what it left when it ended. */
export const lagPoints = (runs: ReadonlyArray<RunLagView>): Array<LagPoint> =>
  runs.flatMap((r) => [
    ...(r.started_at && r.at_start !== null ? [{ at: Date.parse(r.started_at), records: r.at_start, label: `${r.kind} started` }] : []),
    ...(r.ended_at && r.after !== null ? [{ at: Date.parse(r.ended_at), records: r.after, label: `${r.kind} ended` }] : []),
  ]);

export const LagChart = ({ runs, pair }: { readonly runs: ReadonlyArray<RunLagView>; readonly pair: string }) => {
  const chart = useChart({ data: lagPoints(runs), series: [{ color: "orange.solid", label: "not migrated yet", name: "records" }] });
  if (runs.length === 0) return null;
  const label = `Not migrated yet, run after run, ${pair}`;
  return (
    <ChartWithTable
      chart={
        <Chart.Root aria-label={label} aspectRatio="auto" chart={chart} h="220px" role="img">
          <LineChart data={chart.data} margin={{ bottom: 4, left: 8, right: 16, top: 8 }} responsive>
            <CartesianGrid stroke={paint(chart, "border")} vertical={false} />
            <XAxis dataKey={chart.key("at")} domain={["dataMin", "dataMax"]} scale="time" stroke={paint(chart, "border")} tickFormatter={day} type="number" />
            <YAxis stroke={paint(chart, "border")} tickFormatter={compact} width={48} />
            <Tooltip content={<Chart.Tooltip nameKey="label" />} isAnimationActive={false} />
            {chart.series.map((s) => (
              <Line dataKey={chart.key(s.name)} isAnimationActive={false} key={s.name} stroke={paint(chart, s.color)} strokeWidth={2} type="linear" />
            ))}
          </LineChart>
        </Chart.Root>
      }
      table={
        <Table.Root aria-label={label} size="sm">
          <Table.Header>
            <Table.Row>
              <Table.ColumnHeader>Run</Table.ColumnHeader>
              <Table.ColumnHeader textAlign="end">At its start</Table.ColumnHeader>
              <Table.ColumnHeader textAlign="end">After it</Table.ColumnHeader>
            </Table.Row>
          </Table.Header>
          <Table.Body>
            {[...runs].reverse().map((r) => (
              <Table.Row data-run-id={r.run_id} key={r.run_id}>
                <Table.Cell>
                  <ChakraLink asChild>
                    <Link title={r.run_id} to={consoleRun(r.run_id)}>{`${r.kind}, ${time(r.started_at)}`}</Link>
                  </ChakraLink>
                </Table.Cell>
                <Table.Cell textAlign="end">{count(r.at_start)}</Table.Cell>
                <Table.Cell textAlign="end">{r.after === null && r.status === "running" ? "running" : count(r.after)}</Table.Cell>
              </Table.Row>
            ))}
          </Table.Body>
        </Table.Root>
      }
      testId="lag-history"
    />
  );
};

export const RatesChart = ({ points, running }: { readonly points: ReadonlyArray<RatePoint>; readonly running: boolean }) => {
  const chart = useChart({
    data: points.map((p) => ({ ...p, label: `${clock(p.at)} UTC` })),
    series: [
      { color: "blue.solid", label: "copied", name: "copyRate" },
      { color: "green.solid", label: "verified", name: "verifyRate" },
    ],
  });
  if (points.length === 0) {
    return <Text fontSize="sm" mb={2}>{running ? "The rates appear from the second snapshot of the Spark driver on (2 s apart)." : ""}</Text>;
  }
  const label = "Copy and verify rates";
  return (
    <ChartWithTable
      chart={
        <Chart.Root aria-label={`${label}, records per second`} aspectRatio="auto" chart={chart} h="220px" role="img">
          <LineChart data={chart.data} margin={{ bottom: 4, left: 8, right: 16, top: 8 }} responsive>
            <CartesianGrid stroke={paint(chart, "border")} vertical={false} />
            <XAxis dataKey={chart.key("at")} domain={["dataMin", "dataMax"]} scale="time" stroke={paint(chart, "border")} tickFormatter={clock} type="number" />
            <YAxis stroke={paint(chart, "border")} tickFormatter={compact} width={48} />
            <Tooltip content={<Chart.Tooltip formatter={(value: number) => rate(value)} nameKey="label" />} isAnimationActive={false} />
            <Legend content={<Chart.Legend />} />
            {chart.series.map((s) => (
              <Line dataKey={chart.key(s.name)} dot={false} isAnimationActive={false} key={s.name} name={s.label as string} stroke={paint(chart, s.color)} strokeWidth={2} type="linear" />
            ))}
          </LineChart>
        </Chart.Root>
      }
      table={
        <Table.Root aria-label={label} size="sm">
          <Table.Header>
            <Table.Row>
              <Table.ColumnHeader>Snapshot</Table.ColumnHeader>
              <Table.ColumnHeader textAlign="end">Copied</Table.ColumnHeader>
              <Table.ColumnHeader textAlign="end">Verified</Table.ColumnHeader>
              <Table.ColumnHeader textAlign="end">Copy rate</Table.ColumnHeader>
              <Table.ColumnHeader textAlign="end">Verify rate</Table.ColumnHeader>
            </Table.Row>
          </Table.Header>
          <Table.Body>
            {[...points].reverse().map((p) => (
              <Table.Row data-copy-rate={Math.round(p.copyRate)} data-verify-rate={Math.round(p.verifyRate)} key={p.at}>
                <Table.Cell>{`${clock(p.at)} UTC`}</Table.Cell>
                <Table.Cell textAlign="end">{count(p.copied)}</Table.Cell>
                <Table.Cell textAlign="end">{count(p.verified)}</Table.Cell>
                <Table.Cell textAlign="end">{rate(p.copyRate)}</Table.Cell>
                <Table.Cell textAlign="end">{rate(p.verifyRate)}</Table.Cell>
              </Table.Row>
            ))}
          </Table.Body>
        </Table.Root>
      }
      testId="rates"
    />
  );
};
