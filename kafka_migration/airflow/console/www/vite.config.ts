// The console as a library bundle for the Airflow UI (the plugin's react_apps), the way Airflow's
// dev/react-plugin-tools template builds one: UMD, global "AirflowPlugin", with React, ReactDOM, the JSX
// runtime and React Router left to the host UI, which exposes them as globals. Chakra UI and TanStack
// Query are bundled; the host's Chakra theme is used at run time (globalThis.ChakraUISystem).
import { resolve } from "node:path";
import { defineConfig } from "vite";

export default defineConfig({
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 1600,
    lib: {
      entry: resolve(__dirname, "src/main.tsx"),
      fileName: () => "console.umd.cjs",
      formats: ["umd"],
      name: "AirflowPlugin",
    },
    rollupOptions: {
      // Chakra's "use client" markers mean nothing in a bundle: not worth a warning per module.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
      external: ["react", "react-dom", "react-router-dom", "react/jsx-runtime"],
      output: {
        globals: {
          react: "React",
          "react-dom": "ReactDOM",
          "react-router-dom": "ReactRouterDOM",
          "react/jsx-runtime": "ReactJSXRuntime",
        },
      },
    },
  },
  define: {
    global: "globalThis",
    "process.env.NODE_ENV": JSON.stringify("production"),
  },
  esbuild: { jsx: "automatic" },
});
