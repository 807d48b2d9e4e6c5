// A running run's progress over time, kept in the page: every poll that sees a running run (the runs list, the run's
// page, its DAG run tab) adds the Spark driver's newest snapshot, once. The API keeps only the latest snapshot, so the
// series starts when this page first saw the run, and lasts as long as the page (not a reload). Rates are what was
// done between two snapshots divided by the time between them: records per second over the last 2 s or so.
import { useSyncExternalStore } from "react";

import type { RunView } from "./api/types";

/** One snapshot: when the driver wrote it (ms since the epoch) and how many records were copied and verified. */
export type ProgressSample = { readonly at: number; readonly copied: number; readonly verified: number };

/** Records per second between two snapshots, at the later one. */
export type RatePoint = { readonly at: number; readonly copied: number; readonly verified: number; readonly copyRate: number; readonly verifyRate: number };

const KEPT = 600; // snapshots per run: 20 minutes at one every 2 s
const NONE: ReadonlyArray<ProgressSample> = [];
const samples = new Map<string, ReadonlyArray<ProgressSample>>();
const listeners = new Set<() => void>();

/** Keep a running run's newest snapshot (a snapshot already kept, or none yet, changes nothing). */
export const recordProgress = (run: RunView): void => {
  const progress = run.progress;
  if (run.status !== "running" || !progress?.updated) return;
  const at = Date.parse(progress.updated);
  const kept = samples.get(run.run_id) ?? NONE;
  if (Number.isNaN(at) || (kept.length > 0 && kept[kept.length - 1].at >= at)) return;
  samples.set(run.run_id, [...kept, { at, copied: progress.copied, verified: progress.verified }].slice(-KEPT));
  listeners.forEach((listener) => listener());
};

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
};

/** The snapshots this page kept of a run, oldest first. */
export const useProgressSamples = (runId: string): ReadonlyArray<ProgressSample> =>
  useSyncExternalStore(subscribe, () => samples.get(runId) ?? NONE);

export const ratesOf = (kept: ReadonlyArray<ProgressSample>): Array<RatePoint> =>
  kept.slice(1).map((sample, i) => {
    const seconds = (sample.at - kept[i].at) / 1000;
    return {
      ...sample,
      copyRate: Math.max(0, sample.copied - kept[i].copied) / seconds,
      verifyRate: Math.max(0, sample.verified - kept[i].verified) / seconds,
    };
  });
