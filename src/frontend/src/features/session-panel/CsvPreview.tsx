// A CSV/TSV artifact as a table (bounded rows; scrolls inside its box, never the page).
import type { Schemas } from "../../lib/api/client";
import { parseCsv } from "./csv";

const MAX_ROWS = 200;

export function isCsv(path: string, mediaType?: string | null): boolean {
  return /\.(csv|tsv)$/i.test(path) || mediaType === "text/csv" || mediaType === "text/tab-separated-values";
}

export function CsvPreview({ file }: { file: Schemas["VolumeFile"] }) {
  const delimiter = /\.tsv$/i.test(file.path) ? "\t" : ",";
  const table = parseCsv(file.content, { delimiter, maxRows: MAX_ROWS, cut: file.truncated });
  const name = file.path.split("/").pop() ?? file.path;
  return (
    <figure className="m-0 rounded-lg border border-line bg-panel p-2" aria-label={`Table ${name}`}>
      <figcaption className="mb-1 flex min-w-0 gap-2 text-[13px]">
        <strong className="min-w-0 grow truncate">{file.path}</strong>
        <span className="muted shrink-0">{table.rows.length} rows{table.truncated ? " (first rows only)" : ""}</span>
      </figcaption>
      <div className="max-h-80 overflow-auto" tabIndex={0} role="region" aria-label={`${name} rows`}>
        <table className="csv-table">
          <thead><tr>{table.header.map((h, i) => <th key={i} scope="col">{h}</th>)}</tr></thead>
          <tbody>
            {table.rows.map((row, r) => (
              <tr key={r}>{row.map((cell, c) => <td key={c}>{cell}</td>)}</tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
