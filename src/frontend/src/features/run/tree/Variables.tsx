// The REPL's user-visible globals after a cell: name, type, size, a short preview, and what changed since the
// same agent's previous cell. Previews are written by sandbox code (hostile text): React renders them as text
// only, clamped to two lines, the whole preview (at most ~200 characters, bounded by the server) in the title.
import { useState } from "react";
import type { TreeNode } from "../../../lib/events/tree";
import { diffVariables, type VariableChange, type VariableRow } from "../../../lib/events/variables";
import { plural } from "../format";

const CHANGE: Record<VariableChange, { label: string; className: string } | null> = {
  new: { label: "new", className: "border-ok text-ok" },
  changed: { label: "changed", className: "border-warn text-warn" },
  removed: { label: "removed", className: "border-err text-err" },
  unlisted: { label: "not listed", className: "border-line text-muted" },
  same: null,
};

function size(row: Pick<VariableRow, "size" | "type">): string {
  if (row.size === null) return "";
  return row.type === "bytes" || row.type === "bytearray" ? plural(row.size, "byte") : `len ${row.size.toLocaleString()}`;
}

function Row({ row }: { row: VariableRow }) {
  const badge = CHANGE[row.change];
  const gone = row.change === "removed" || row.change === "unlisted";
  return (
    <li className="border-b border-line py-1.5 last:border-b-0" data-testid="variable" data-name={row.name} data-change={row.change}>
      <div className="flex min-w-0 flex-wrap items-baseline gap-x-2">
        <code className={`min-w-0 truncate font-semibold ${gone ? "text-muted line-through" : ""}`} title={row.name}>{row.name}</code>
        <span className="min-w-0 truncate text-[12px] text-muted" title={row.type}>{row.type}</span>
        {size(row) && <span className="text-[12px] tabular-nums text-muted">{size(row)}</span>}
        {row.input && <span className="rounded border border-line px-1 text-[10px] uppercase tracking-wide text-muted">input</span>}
        {badge && <span className={`rounded border px-1 text-[10px] font-semibold uppercase tracking-wide ${badge.className}`}>{badge.label}</span>}
      </div>
      {!gone && (
        <div className="line-clamp-2 break-all font-mono text-[12px]" title={row.preview} data-testid="variable-preview">{row.preview}</div>
      )}
      {row.before && row.change === "changed" && (
        <div className="line-clamp-1 break-all font-mono text-[11px] text-muted" title={row.before.preview}>
          was {row.before.type !== row.type ? `${row.before.type} ` : ""}{size(row.before) && `(${size(row.before)}) `}{row.before.preview}
        </div>
      )}
    </li>
  );
}

export function Variables({ cell }: { cell: TreeNode }) {
  const [onlyChanges, setOnlyChanges] = useState(false);
  if (!cell.vars) return null;
  const diff = diffVariables(cell.vars.report, cell.vars.previous);
  const changed = diff.rows.filter((r) => r.change !== "same");
  const shown = onlyChanges ? changed : diff.rows;
  const parts = (["new", "changed", "removed"] as const).filter((k) => diff.counts[k]).map((k) => `${diff.counts[k]} ${k}`);
  const listed = diff.rows.length - diff.counts.removed - diff.counts.unlisted;
  return (
    <section className="mt-2" aria-label="REPL variables" data-testid="variables">
      <div className="flex flex-wrap items-center gap-2">
        <h3 className="m-0 text-[11px] font-semibold uppercase tracking-wide text-muted">REPL variables</h3>
        <span className="text-[12px] text-muted">
          {plural(listed, "variable")}{diff.omitted ? ` (+${diff.omitted} not listed)` : ""}{parts.length ? ` · ${parts.join(", ")}` : " · nothing changed"}
        </span>
        <span className="grow" />
        {diff.counts.same > 0 && (
          <button type="button" className="!px-2 !py-0 text-[12px] aria-pressed:!border-accent aria-pressed:!bg-accent aria-pressed:!text-[var(--accent-text)]" aria-pressed={onlyChanges} onClick={() => setOnlyChanges(!onlyChanges)}>
            Changes only
          </button>
        )}
      </div>
      {shown.length > 0 ? (
        <ul className="m-0 mt-1 max-h-[28rem] list-none overflow-auto rounded-md border border-line bg-panel px-2 py-0" tabIndex={0} aria-label="Variables after this cell">
          {shown.map((r) => <Row key={r.name} row={r} />)}
        </ul>
      ) : (
        <p className="muted m-0 text-[12px]">{diff.rows.length ? "No variable changed in this cell." : "No user-visible globals."}</p>
      )}
    </section>
  );
}
