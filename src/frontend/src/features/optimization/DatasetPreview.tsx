// The first rows of a dataset as a table, plus its row problems (from the browser's check or the server's 422).
import { cellText, type Row, type RowError } from "./dataset";

export function RowErrors({ errors, unit, total }: { errors: RowError[]; unit: string; total?: number }) {
  if (errors.length === 0) return null;
  const count = Math.max(total ?? 0, errors.length);
  return (
    <div role="alert" className="state error" aria-label="Row errors">
      <strong>{count} invalid {unit}{count === 1 ? "" : "s"}</strong>
      <ul className="mt-1 mb-0 max-h-[180px] overflow-auto pl-[18px]">
        {errors.map((e) => (
          <li key={`${e.line}:${e.message}`}>{unit} {e.line}: {e.message}</li>
        ))}
      </ul>
    </div>
  );
}

export function RowsTable({ rows, columns, label, limit = 5 }: { rows: Row[]; columns: string[]; label: string; limit?: number }) {
  if (rows.length === 0) return <p className="muted">No rows.</p>;
  return (
    <div className="relative min-w-0 overflow-x-auto">
      <table aria-label={label}>
        <thead>
          <tr><th>#</th>{columns.map((c) => <th key={c}>{c}</th>)}</tr>
        </thead>
        <tbody>
          {rows.slice(0, limit).map((row, i) => (
            <tr key={i}>
              <td className="muted">{i + 1}</td>
              {columns.map((c) => <td key={c}>{cellText(row[c])}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length > limit && <p className="muted small">…and {rows.length - limit} more row(s).</p>}
    </div>
  );
}
