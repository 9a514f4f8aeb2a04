// What the REPL held after a cell, compared with the same agent's previous cell: which globals are new, which
// changed, which are gone. The report lists at most the 50 most recently defined globals, so a name missing from
// a report that left some out may still exist: it is "unlisted", not "removed".
import type { ReplVariable, ReplVariables } from "../api/events.gen";

export type VariableChange = "new" | "changed" | "same" | "removed" | "unlisted";

export interface VariableRow {
  name: string;
  type: string;
  size: number | null;
  preview: string;
  input: boolean;
  change: VariableChange;
  /** The previous report's entry when the variable changed (or is gone). */
  before?: ReplVariable;
}

export interface VariableDiff {
  rows: VariableRow[];
  /** Visible globals the report left out (beyond the 50 listed). */
  omitted: number;
  counts: Record<VariableChange, number>;
}

const same = (a: ReplVariable, b: ReplVariable) => a.type === b.type && a.size === b.size && a.preview === b.preview;

/** The report after a cell against the agent's previous report (null for its first cell). */
export function diffVariables(current: ReplVariables, previous: ReplVariables | null): VariableDiff {
  const before = new Map((previous?.variables ?? []).map((v) => [v.name, v]));
  // what the model made first (in definition order), then the turn's inputs, then what is gone
  const ordered = [...current.variables.filter((v) => !v.input), ...current.variables.filter((v) => v.input)];
  const rows: VariableRow[] = ordered.map((v) => {
    const old = before.get(v.name);
    // with no earlier report, the turn's inputs were there before the cell ran; everything else it made
    const change: VariableChange = old ? (same(old, v) ? "same" : "changed") : previous || !v.input ? "new" : "same";
    return { ...v, change, ...(old && change === "changed" ? { before: old } : {}) };
  });
  const now = new Set(current.variables.map((v) => v.name));
  for (const old of previous?.variables ?? []) {
    if (now.has(old.name)) continue;
    rows.push({ ...old, change: current.omitted > 0 ? "unlisted" : "removed", before: old });
  }
  const counts: Record<VariableChange, number> = { new: 0, changed: 0, same: 0, removed: 0, unlisted: 0 };
  for (const r of rows) counts[r.change] += 1;
  return { rows, omitted: current.omitted, counts };
}
