import { describe, expect, it } from "vitest";
import type { FleetEvent } from "../api/events.gen";
import fanout from "../../test/fixtures/fanout-run.json";
import { ancestors, buildTree, nodeForSeq, visibleRows, type RunTree } from "./tree";

// A real depth-2 run recorded from `fleet web` + the fake LM: the root fans out to three parallel children
// (rlm_query_batched); two ask batched sub-LM questions, the third delegates once more (depth 2).
const events = fanout as unknown as FleetEvent[];

const kids = (t: RunTree, id: string) => t.nodes[id].children.map((c) => t.nodes[c]);

describe("run tree", () => {
  const tree = buildTree(events);

  it("nests iterations, cells, tool calls and child RLMs by who spawned them", () => {
    const root = tree.nodes[tree.rootId!];
    expect(root.kind).toBe("run");
    expect(root.status).toBe("ok");
    const iterations = kids(tree, root.id).filter((n) => n.kind === "iteration");
    expect(iterations.map((n) => n.title)).toEqual(["Iteration 1", "Iteration 2"]);
    const cell = kids(tree, iterations[0].id).find((n) => n.kind === "code")!;
    const fan = kids(tree, cell.id).find((n) => n.kind === "tool")!;
    expect(fan.title).toBe("rlm_query_batched");
    const children = kids(tree, fan.id);
    expect(children.map((c) => [c.kind, c.agentDepth, c.status])).toEqual([["child", 1, "ok"], ["child", 1, "ok"], ["child", 1, "ok"]]);
    const gamma = children.find((c) => c.subtitle.includes("gamma"))!;
    const deep = Object.values(tree.nodes).filter((n) => n.kind === "child" && n.agentDepth === 2);
    expect(deep).toHaveLength(1);
    expect(ancestors(tree, deep[0].id)).toContain(gamma.id);
    expect(kids(tree, deep[0].id).filter((n) => n.kind === "iteration")).toHaveLength(2);
  });

  it("puts each agent's own LM calls first in the iteration they generate, with their tokens", () => {
    const lms = Object.values(tree.nodes).filter((n) => n.kind === "lm");
    expect(lms.length).toBeGreaterThanOrEqual(10); // 2 root + 2 per child (4 children) + sub-LM calls are not separate
    for (const n of lms) {
      const parent = tree.nodes[n.parent!];
      expect(parent.kind).toBe("iteration");
      expect(parent.children[0]).toBe(n.id);
      expect(n.tokensIn).toBeGreaterThan(0);
    }
    const iteration = tree.nodes[lms[0].parent!];
    expect(iteration.tokensIn).toBeGreaterThanOrEqual(lms[0].tokensIn);
  });

  it("groups a batch's sub-LM calls and sums their tokens upwards", () => {
    const batches = Object.values(tree.nodes).filter((n) => n.kind === "batch");
    expect(batches).toHaveLength(3);
    for (const b of batches) {
      expect(b.status).toBe("ok");
      expect(b.children).toHaveLength(2);
      expect(b.subtitle).toBe("2/2 done");
      expect(b.tokensIn).toBe(kids(tree, b.id).reduce((n, c) => n + c.tokensIn, 0));
    }
    expect(tree.nodes[tree.rootId!].tokensIn).toBeGreaterThan(batches[0].tokensIn);
  });

  it("puts every span on one axis: children start after their parent and end before the run", () => {
    const root = tree.nodes[tree.rootId!];
    for (const n of Object.values(tree.nodes)) {
      expect(n.end).not.toBeNull();
      expect(n.start).toBeGreaterThanOrEqual(root.start);
      expect(n.end!).toBeLessThanOrEqual(root.end!);
    }
  });

  it("is the same tree for a replay with duplicates and out-of-order delivery", () => {
    const shuffled = [...events].reverse().concat(events.slice(0, 10));
    const again = buildTree(shuffled);
    expect(Object.keys(again.nodes)).toEqual(Object.keys(tree.nodes));
  });

  it("collapses subtrees and finds the node of any seq (deep links)", () => {
    const all = visibleRows(tree, new Set());
    expect(all).toHaveLength(Object.keys(tree.nodes).length);
    const firstChild = Object.values(tree.nodes).find((n) => n.kind === "child")!;
    const fewer = visibleRows(tree, new Set([firstChild.id]));
    expect(all.length - fewer.length).toBeGreaterThan(2);
    const subLmEnd = events.find((e) => e.type === "sub_lm_end")!;
    expect(tree.nodes[nodeForSeq(tree, subLmEnd.seq)!].kind).toBe("sub_lm");
  });

  it("marks spans still open as running while the run is live, and cancelled when it is cancelled", () => {
    const cut = events.filter((e) => e.seq <= 20);
    const live = buildTree(cut);
    expect(live.finished).toBe(false);
    expect(live.nodes[live.rootId!].status).toBe("running");
    const last = cut[cut.length - 1];
    const cancelled = buildTree([...cut, { ...last, seq: 21, type: "turn_cancelled", reason: "user", requested_by: null, duration_ms: 1 } as FleetEvent]);
    expect(cancelled.nodes[cancelled.rootId!].status).toBe("cancelled");
    expect(Object.values(cancelled.nodes).filter((n) => n.status === "running")).toHaveLength(0);
  });
});
