// Numbers and times as the console shows them. Offset ranges as everywhere in the product
// (kafka_migration.model.text.offset_range): first and last offset, both included, with the count.

export const count = (value: number | null | undefined): string =>
  value === null || value === undefined ? "–" : value.toLocaleString("en-US");

export const plural = (n: number, word: string, many = `${word}s`): string => `${count(n)} ${n === 1 ? word : many}`;

// A cluster as a reader finds it: its name when it has one (the API's /api/clusters: cluster_names, or the Kafka
// connection at its addresses), its id, and where it was reached (the first bootstrap address, and how many more),
// as `kafka-migrate history` shows it: "kafka_source (MkU3OEVBNTcwNTJENDM2Qg, broker-1:9092 +2)".
export const cluster = (id: string, bootstrap?: string | null, name?: string | null): string => {
  const addresses = (bootstrap ?? "").split(",").map((a) => a.trim()).filter((a) => a);
  const where = addresses.length ? `${addresses[0]}${addresses.length > 1 ? ` +${addresses.length - 1}` : ""}` : "";
  if (name) return `${name} (${id}${where ? `, ${where}` : ""})`;
  return where ? `${id} (${where})` : id;
};

export const seconds = (value: number | null | undefined): string => {
  if (value === null || value === undefined) return "–";
  if (value < 60) return `${value.toFixed(value < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(value / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(value % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
};

export const age = (value: number | null | undefined): string =>
  value === null || value === undefined ? "–" : `${seconds(value)} ago`;

export const time = (iso: string | null | undefined): string => {
  if (!iso) return "–";
  const date = new Date(iso);
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
};

export const range = (start: number, end: number | null | undefined): string => {
  if (end === null || end === undefined) return `${start} onwards`;
  if (end <= start) return `none at ${start}`;
  const span = end - start === 1 ? `${start}` : `${start}–${end - 1}`;
  return `${span} (${plural(end - start, "offset")})`;
};

export const rate = (value: number): string => (value > 0 ? `${count(Math.round(value))} records/s` : "–");

export const percent = (done: number, planned: number): number =>
  planned > 0 ? Math.min(100, Math.round((100 * done) / planned)) : 100;

export const shortChecksum = (value: string | null): string =>
  value ? value.replace(/^sha256:/u, "").slice(0, 12) : "–";
