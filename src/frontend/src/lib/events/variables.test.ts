import { beforeEach, describe, expect, it } from "vitest";
import type { ReplVariable } from "../api/events.gen";
import { ev, resetSeq } from "../../test/events";
import { buildTree } from "./tree";
import { diffVariables } from "./variables";

const v = (name: string, preview: string, fields: Partial<ReplVariable> = {}): ReplVariable => ({ name, type: "list", size: 1, preview, input: false, ...fields });

describe("REPL variables", () => {
  beforeEach(() => resetSeq());

  it("marks what a cell made, changed and removed against the agent's previous cell", () => {
    const first = ev("repl_variables", { variables: [v("notes", "['a']"), v("context", "'doc'", { type: "str", size: 3, input: true }), v("tmp", "1", { type: "int", size: null })], omitted: 0 });
    const second = ev("repl_variables", { variables: [v("notes", "['a', 'b']", { size: 2 }), v("context", "'doc'", { type: "str", size: 3, input: true }), v("total", "2", { type: "int", size: null })], omitted: 0 });
    const a = diffVariables(first, null);
    expect(a.rows.map((r) => [r.name, r.change])).toEqual([["notes", "new"], ["tmp", "new"], ["context", "same"]]);
    const b = diffVariables(second, first);
    expect(b.rows.map((r) => [r.name, r.change])).toEqual([["notes", "changed"], ["total", "new"], ["context", "same"], ["tmp", "removed"]]);
    expect(b.rows[0].before?.preview).toBe("['a']");
    expect(b.counts).toMatchObject({ new: 1, changed: 1, same: 1, removed: 1 });
  });

  it("does not call a global removed when the report left some out", () => {
    const first = ev("repl_variables", { variables: [v("old", "1")], omitted: 0 });
    const second = ev("repl_variables", { variables: [v("x1", "1")], omitted: 49 });
    const d = diffVariables(second, first);
    expect(d.rows.find((r) => r.name === "old")?.change).toBe("unlisted");
    expect(d.omitted).toBe(49);
  });

  it("hangs each report on its cell and diffs per agent (a child has its own REPL)", () => {
    const events = [
      ev("turn_started", { input_preview: "t", requested_mode: "rlm" }),
      ev("reasoning", { text: "r1", iteration: 1 }),
      ev("code", { code: "x = 1", iteration: 1 }),
      ev("repl_variables", { variables: [v("x", "1")], omitted: 0, iteration: 1 }),
      ev("child_start", { child_id: "c1", child_depth: 1, task_preview: "sub", parent_id: null }),
      ev("reasoning", { text: "c", iteration: 1, actor: "child:c1", depth: 1 }),
      ev("code", { code: "y = 2", iteration: 1, actor: "child:c1", depth: 1 }),
      ev("repl_variables", { variables: [v("y", "2")], omitted: 0, iteration: 1, actor: "child:c1", depth: 1 }),
      ev("reasoning", { text: "r2", iteration: 2 }),
      ev("code", { code: "x = 3", iteration: 2 }),
      ev("repl_variables", { variables: [v("x", "3")], omitted: 0, iteration: 2 }),
    ];
    const tree = buildTree(events);
    const cells = Object.values(tree.nodes).filter((n) => n.kind === "code");
    expect(cells).toHaveLength(3);
    const [root1, child1, root2] = cells;
    expect(root1.vars?.previous).toBeNull();
    expect(child1.vars?.previous).toBeNull();
    expect(child1.agentDepth).toBe(1);
    expect(diffVariables(root2.vars!.report, root2.vars!.previous).rows.map((r) => [r.name, r.change])).toEqual([["x", "changed"]]);
  });
});
