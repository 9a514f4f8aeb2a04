// Dataset files read in the browser before upload: JSONL or CSV parsed into rows, checked against the module's
// required keys, so the preview shows the same row problems the server would reject (line numbers match its
// 422 details.errors: the file line for JSONL, the record number + 1 for CSV, whose line 1 is the header).

export type DatasetFormat = "jsonl" | "csv";
export type Row = Record<string, unknown>;

export interface RowError {
  line: number;
  message: string;
}

export interface ParsedDataset {
  format: DatasetFormat;
  rows: Row[];
  columns: string[];
  errors: RowError[];
}

export function detectFormat(filename: string, text: string): DatasetFormat {
  const lower = filename.toLowerCase();
  if (lower.endsWith(".csv")) return "csv";
  if (/\.(jsonl|ndjson|json)$/.test(lower)) return "jsonl";
  return text.trimStart().startsWith("{") ? "jsonl" : "csv";
}

function parseJsonl(text: string): { rows: Row[]; errors: RowError[] } {
  const rows: Row[] = [];
  const errors: RowError[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (cause) {
      errors.push({ line: i + 1, message: `not valid JSON (${cause instanceof Error ? cause.message : String(cause)})` });
      return;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      errors.push({ line: i + 1, message: "each line must be a JSON object" });
      return;
    }
    rows.push(value as Row);
  });
  return { rows, errors };
}

/** RFC 4180 records: quoted cells may hold commas, doubled quotes and newlines. */
export function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      record.push(cell);
      cell = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      record.push(cell);
      records.push(record);
      record = [];
      cell = "";
    } else cell += ch;
  }
  if (cell !== "" || record.length > 0) {
    record.push(cell);
    records.push(record);
  }
  return records.filter((r) => !(r.length === 1 && r[0] === ""));
}

function parseCsv(text: string): { rows: Row[]; errors: RowError[] } {
  const [header, ...records] = csvRecords(text);
  if (!header) return { rows: [], errors: [] };
  const keys = header.map((k) => k.trim());
  const rows: Row[] = [];
  const errors: RowError[] = [];
  records.forEach((cells, i) => {
    if (cells.length > keys.length) {
      errors.push({ line: i + 2, message: "more cells than header columns" });
      return;
    }
    const row: Row = {};
    keys.forEach((key, k) => {
      if (key) row[key] = cells[k] ?? null;
    });
    rows.push(row);
  });
  return { rows, errors };
}

const blank = (v: unknown) => v === null || v === undefined || (typeof v === "string" && !v.trim()) || (Array.isArray(v) && v.length === 0);

/** Rows missing a required key or with an empty required value (line = row number, as the server counts). */
export function validateRows(rows: Row[], requiredKeys: string[]): RowError[] {
  const errors: RowError[] = [];
  rows.forEach((row, i) => {
    const missing = requiredKeys.filter((k) => !(k in row));
    const empty = requiredKeys.filter((k) => k in row && blank(row[k]));
    if (missing.length) errors.push({ line: i + 1, message: `missing key(s): ${missing.join(", ")}` });
    else if (empty.length) errors.push({ line: i + 1, message: `empty value for: ${empty.join(", ")}` });
  });
  return errors;
}

/** Parse a file's text; syntax errors come first, and key checks only run on a file that parses. */
export function parseDataset(text: string, filename: string, requiredKeys: string[]): ParsedDataset {
  const format = detectFormat(filename, text);
  const { rows, errors } = format === "csv" ? parseCsv(text) : parseJsonl(text);
  const columns: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  return { format, rows, columns, errors: errors.length ? errors : validateRows(rows, requiredKeys) };
}

/** A short one-line rendering of a cell for preview tables. */
export function cellText(value: unknown, limit = 80): string {
  const text = value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
  const flat = text.replace(/\s+/g, " ");
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

/** The server's 422 row errors (details.errors), if the error carries them. */
export function rowErrorsOf(details: Record<string, unknown> | undefined): RowError[] {
  const raw = details?.errors;
  if (!Array.isArray(raw)) return [];
  return raw
    .filter((e): e is { line: unknown; message: unknown } => typeof e === "object" && e !== null)
    .map((e) => ({ line: Number(e.line), message: String(e.message) }));
}
