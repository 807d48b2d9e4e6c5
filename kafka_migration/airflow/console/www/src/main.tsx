// The operator's console, a React app the Airflow UI loads from the plugin's react_apps: in the navigation
// (Browse > Kafka migrations) and as the "Migration" tab of DAG run pages, where the host passes dagId and
// runId. React, React Router and the JSX runtime are the host's (see vite.config.ts).
import { ChakraProvider, createSystem, defaultConfig } from "@chakra-ui/react";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { Route, Routes } from "react-router-dom";

import { Layout } from "./Layout";
import { AccessPage, AccessSyncPage } from "./pages/Access";
import { CutoverPage } from "./pages/Cutover";
import { GroupsPage } from "./pages/Groups";
import { OverviewPage } from "./pages/Overview";
import { DagRunTab, RunPage } from "./pages/Run";
import { RunsPage } from "./pages/Runs";

export type PluginComponentProps = { dagId?: string; runId?: string; taskId?: string; mapIndex?: string };

// Module level: the host mounts the component afresh on every navigation (its key is the path), and the
// cache should outlive that.
const queryClient = new QueryClient({
  defaultOptions: { queries: { refetchOnWindowFocus: false, retry: 1, staleTime: 2000 } },
});
const localSystem = createSystem(defaultConfig);

const PluginComponent = ({ dagId, runId }: PluginComponentProps) => {
  // The host's Chakra system, so the console looks like the rest of Airflow (light and dark).
  const system = (globalThis as { ChakraUISystem?: typeof localSystem }).ChakraUISystem ?? localSystem;

  return (
    <ChakraProvider value={system}>
      <QueryClientProvider client={queryClient}>
        {dagId !== undefined && runId !== undefined ? (
          <DagRunTab dagId={dagId} dagRunId={runId} />
        ) : (
          <Routes>
            <Route element={<Layout />}>
              <Route element={<OverviewPage />} index />
              <Route element={<RunsPage />} path="runs" />
              <Route element={<RunPage />} path="runs/:migrationRunId" />
              <Route element={<GroupsPage />} path="groups" />
              <Route element={<CutoverPage />} path="cutover" />
              <Route element={<AccessPage />} path="access" />
              <Route element={<AccessSyncPage />} path="access/:syncId" />
            </Route>
          </Routes>
        )}
      </QueryClientProvider>
    </ChakraProvider>
  );
};

export default PluginComponent;
