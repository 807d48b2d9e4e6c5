import { Alert, Badge, Box, Button, HStack, Heading, Progress as Bar, Spinner, Table, Text } from "@chakra-ui/react";
import type { ReactNode } from "react";

import { percent } from "./format";

const PALETTE: Record<string, string> = {
  completed: "green",
  failed: "red",
  mismatch: "red",
  "not_proven": "red",
  refused: "orange",
  running: "blue",
  synced: "green",
  target_lost: "red",
  unchanged: "green",
  unverified: "orange",
  up_to_date: "green",
  verified: "green",
  would_sync: "teal",
};

export const StatusBadge = ({ status, label }: { readonly status: string; readonly label?: string }) => (
  <Badge colorPalette={PALETTE[status] ?? "gray"} data-status={status} variant="solid">
    {label ?? status.replaceAll("_", " ").toUpperCase()}
  </Badge>
);

export const Section = ({ title, children, actions }: { readonly title: string; readonly children: ReactNode; readonly actions?: ReactNode }) => (
  <Box as="section" mb={6}>
    <HStack justify="space-between" mb={2}>
      <Heading size="md">{title}</Heading>
      {actions}
    </HStack>
    {children}
  </Box>
);

export const ErrorBox = ({ error }: { readonly error: unknown }) => (
  <Alert.Root status="error" my={3}>
    <Alert.Indicator />
    <Alert.Content>
      <Alert.Title>Could not load this view</Alert.Title>
      <Alert.Description>{error instanceof Error ? error.message : String(error)}</Alert.Description>
    </Alert.Content>
  </Alert.Root>
);

export const Notice = ({ status, title, children }: { readonly status: "info" | "warning" | "error" | "success"; readonly title: string; readonly children?: ReactNode }) => (
  <Alert.Root status={status} my={2}>
    <Alert.Indicator />
    <Alert.Content>
      <Alert.Title>{title}</Alert.Title>
      {children ? <Alert.Description>{children}</Alert.Description> : undefined}
    </Alert.Content>
  </Alert.Root>
);

export const Loading = () => (
  <HStack my={4}>
    <Spinner size="sm" />
    <Text>Loading…</Text>
  </HStack>
);

export const ProgressLine = ({ done, planned, label }: { readonly done: number; readonly planned: number; readonly label?: string }) => (
  <Bar.Root aria-label={label} flexShrink={0} size="sm" value={percent(done, planned)} w="180px">
    <Bar.Track>
      <Bar.Range />
    </Bar.Track>
  </Bar.Root>
);

export const Pager = ({ total, limit, offset, onChange }: { readonly total: number; readonly limit: number; readonly offset: number; readonly onChange: (offset: number) => void }) => (
  <HStack gap={3} mt={3}>
    <Button disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))} size="xs" variant="outline">
      Previous
    </Button>
    <Text fontSize="sm" data-testid="pager">
      {total === 0 ? "none" : `${offset + 1}–${Math.min(offset + limit, total)} of ${total}`}
    </Text>
    <Button disabled={offset + limit >= total} onClick={() => onChange(offset + limit)} size="xs" variant="outline">
      Next
    </Button>
  </HStack>
);

// A table cell holding an id as long as a run's (kafka_migration__manual__2026-11-29T06_32_46.979445_00_00): it
// wraps where it must when its column is narrow, but keeps at least 18 characters to a line.
export const ID_CELL = { minW: "18ch", overflowWrap: "anywhere" } as const;

// A table in a frame of the page's width: its cells wrap (Chakra's scroll area would keep every cell on one line,
// so that a table of long ids runs off a laptop's screen); one still wider scrolls sideways inside its frame.
export const SimpleTable = ({ headers, children, label }: { readonly headers: Array<string>; readonly children: ReactNode; readonly label: string }) => (
  <Table.ScrollArea borderWidth="1px" rounded="md" whiteSpace="normal">
    <Table.Root aria-label={label} size="sm" striped>
      <Table.Header>
        <Table.Row>
          {headers.map((h) => (
            <Table.ColumnHeader key={h}>{h}</Table.ColumnHeader>
          ))}
        </Table.Row>
      </Table.Header>
      <Table.Body>{children}</Table.Body>
    </Table.Root>
  </Table.ScrollArea>
);
