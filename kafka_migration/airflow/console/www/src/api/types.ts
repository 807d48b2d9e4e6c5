// The console API's response types by name, as its pydantic models (kafka_migration/airflow/console/models.py)
// describe them. They come from openapi.ts, which `make console-types` generates from the API's OpenAPI
// description; `make console` fails when it is out of date. Never write one by hand.
import type { components } from "./openapi";

type Schemas = components["schemas"];

export type OverviewView = Schemas["OverviewView"];
export type ClusterPairView = Schemas["ClusterPairView"];
export type TopicLagView = Schemas["TopicLagView"];
export type RunsPageView = Schemas["RunsPageView"];
export type RunFacetsView = Schemas["RunFacetsView"];
export type RunView = Schemas["RunView"];
export type RunDetailView = Schemas["RunDetailView"];
export type TimingsView = Schemas["TimingsView"];
export type RunProgressView = Schemas["RunProgressView"];
export type ProgressSummaryView = Schemas["ProgressSummaryView"];
export type SegmentView = Schemas["SegmentView"];
export type RunSchemasView = Schemas["RunSchemasView"];
export type SchemaCountView = Schemas["SchemaCountView"];
export type GroupSyncsPageView = Schemas["GroupSyncsPageView"];
export type GroupSyncView = Schemas["GroupSyncView"];
export type CutoversPageView = Schemas["CutoversPageView"];
export type CutoverView = Schemas["CutoverView"];
export type PreflightView = Schemas["PreflightView"];
export type AccessSyncsPageView = Schemas["AccessSyncsPageView"];
export type AccessSyncView = Schemas["AccessSyncView"];
export type AccessSyncDetailView = Schemas["AccessSyncDetailView"];
export type LagHistoryView = Schemas["LagHistoryView"];
export type PairLagHistoryView = Schemas["PairLagHistoryView"];
export type RunLagView = Schemas["RunLagView"];
