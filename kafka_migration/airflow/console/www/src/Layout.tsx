import { Box, HStack, Heading, Link as ChakraLink, Text } from "@chakra-ui/react";
import { NavLink, Outlet } from "react-router-dom";

import { CONSOLE } from "./links";

const TABS: Array<[string, string]> = [
  ["Overview", CONSOLE],
  ["Runs", `${CONSOLE}/runs`],
  ["Consumer groups", `${CONSOLE}/groups`],
  ["Cutover", `${CONSOLE}/cutover`],
  ["Access", `${CONSOLE}/access`],
];

export const Layout = () => (
  <Box p={4} data-testid="kafka-console">
    <Heading size="xl">Kafka migrations</Heading>
    <Text color="fg.muted" fontSize="sm" mb={3}>
      Runs, checkpoints, consumer groups, cutovers and access syncs from the migration ledger. An offset range gives its first
      and last offset, both included, and how many offsets it holds: 0–1469 (1,470 offsets).
    </Text>
    <HStack as="nav" aria-label="Console views" borderBottomWidth="1px" gap={5} mb={4} pb={2}>
      {TABS.map(([label, to]) => (
        <ChakraLink asChild key={to}>
          <NavLink end={to === CONSOLE} style={({ isActive }) => ({ fontWeight: isActive ? 700 : 400, textDecoration: isActive ? "underline" : "none" })} to={to}>
            {label}
          </NavLink>
        </ChakraLink>
      ))}
    </HStack>
    <Outlet />
  </Box>
);
