// Folds a run's events into a span tree on one time axis (what trace viewers draw as a waterfall): the run,
// each agent's iterations with their REPL cell, tool calls, sub-LM calls (batches grouped) and child RLMs
// nested under the call that spawned them, each with its own iterations. Pure and rebuilt from the event
// list, so replays, reconnects and live updates all give the same tree. Node ids are the seq of the event
// that opened the node (stable, used in deep links: ?node=<seq>); a batch is "b<seq>" of its first call.
import type { FleetEvent } from "../api/events.gen";

export type NodeKind = "run" | "iteration" | "lm" | "code" | "output" | "tool" | "sub_lm" | "batch" | "child" | "event";
export type NodeStatus = "running" | "ok" | "failed" | "warn" | "cancelled";

export interface TreeNode {
  id: string;
  seq: number;
  kind: NodeKind;
  title: string;
  subtitle: string;
  status: NodeStatus;
  start: number;
  end: number | null;
  parent: string | null;
  children: string[];
  /** RLM depth of the agent the node belongs to (0 = root agent). */
  agentDepth: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number | null;
  events: FleetEvent[];
  /** The spawned child's id (kind "child"), the batch id (kind "batch"), the call id (tool / sub_lm). */
  ref?: string;
  /** A cell's REPL report (kind "code"), and the same agent's report after its previous cell. */
  vars?: { report: ReplVariablesEvent; previous: ReplVariablesEvent | null };
}

type ReplVariablesEvent = Extract<FleetEvent, { type: "repl_variables" }>;

export interface RunTree {
  nodes: Record<string, TreeNode>;
  rootId: string | null;
  t0: number;
  /** Latest timestamp seen (the axis end while the run is live). */
  tLast: number;
  finished: boolean;
}

interface Agent {
  node: string;
  depth: number;
  iter: string | null;
  iterNo: number | null;
  code: string | null;
  lastTs: number;
  openTools: string[];
  /** lm_call events for an iteration whose node does not exist yet (the call precedes its reasoning). */
  pendingLm: Extract<FleetEvent, { type: "lm_call" }>[];
  /** The REPL report after this agent's last cell (each agent has its own sandbox). */
  lastVars: ReplVariablesEvent | null;
}

const END_STATUS: Record<string, NodeStatus> = {
  turn_finished: "ok",
  turn_failed: "failed",
  turn_cancelled: "cancelled",
  turn_interrupted: "failed",
};

const firstLine = (text: string, max = 120) => {
  const line = (text ?? "").trim().split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

export function buildTree(events: FleetEvent[]): RunTree {
  const nodes: Record<string, TreeNode> = {};
  const agents: Record<string, Agent> = {};
  const calls: Record<string, string> = {}; // call id -> node id (tools and sub-LM calls)
  const batches: Record<string, string> = {};
  let rootId: string | null = null;
  let t0 = 0;
  let tLast = 0;
  let finished = false;
  const fixed = new Set<string>(); // nodes whose totals were reported (usage), not summed

  const add = (e: FleetEvent, kind: NodeKind, parent: string | null, title: string, extra: Partial<TreeNode> = {}, prefix = ""): TreeNode => {
    const ts = Date.parse(e.ts);
    const node: TreeNode = {
      id: `${prefix}${e.seq}`, seq: e.seq, kind, title, subtitle: "", status: "running", start: ts, end: null, parent,
      children: [], agentDepth: e.depth, tokensIn: 0, tokensOut: 0, costUsd: null, events: [e], ...extra,
    };
    nodes[node.id] = node;
    if (parent) nodes[parent].children.push(node.id);
    return node;
  };
  const close = (id: string | null, ts: number, status: NodeStatus = "ok") => {
    if (!id) return;
    const n = nodes[id];
    if (n.end === null) n.end = Math.max(ts, n.start);
    if (n.status === "running") n.status = status;
  };
  const ensureRoot = (e: FleetEvent): string => {
    if (rootId) return rootId;
    const n = add(e, "run", null, "Run");
    n.events = [];
    rootId = n.id;
    t0 = n.start;
    agents.root = { node: n.id, depth: 0, iter: null, iterNo: null, code: null, lastTs: n.start, openTools: [], pendingLm: [], lastVars: null };
    return rootId;
  };
  const agentOf = (e: FleetEvent): Agent => {
    if (e.actor.startsWith("child:")) {
      const id = e.actor.slice("child:".length);
      if (agents[id]) return agents[id];
    }
    return agents.root;
  };
  const container = (a: Agent) => a.openTools[a.openTools.length - 1] ?? a.code ?? a.iter ?? a.node;
  const startIteration = (a: Agent, e: FleetEvent, no: number) => {
    if (a.iterNo === no && a.iter) return;
    close(a.code, a.lastTs);
    close(a.iter, a.lastTs);
    const calls = a.pendingLm.filter((c) => c.iteration === no);
    // the iteration begins with the LM call that generated it (which may start before the last cell's end)
    const start = Math.min(a.lastTs, ...calls.map((c) => Date.parse(c.ts) - c.latency_ms));
    const n = add(e, "iteration", a.node, `Iteration ${no}`, { start }, e.type === "reasoning" ? "" : "i");
    n.events = [];
    a.iter = n.id;
    a.iterNo = no;
    a.code = null;
    a.openTools = [];
    const mine = a.pendingLm.filter((c) => c.iteration === no);
    a.pendingLm = a.pendingLm.filter((c) => c.iteration !== no);
    for (const c of mine) addLm(c, n.id);
  };
  const addLm = (e: Extract<FleetEvent, { type: "lm_call" }>, parent: string) => {
    const ts = Date.parse(e.ts);
    add(e, "lm", parent, `LM · ${e.role}`, {
      subtitle: `${e.model}${e.cached ? " · cached" : ""}`,
      status: e.ok ? "ok" : "failed", start: ts - e.latency_ms, end: ts, tokensIn: e.tokens_in, tokensOut: e.tokens_out, costUsd: e.cost_usd,
    });
  };

  const sorted = [...events].sort((x, y) => x.seq - y.seq);
  let lastSeq = 0;
  for (const e of sorted) {
    if (e.seq <= lastSeq) continue;
    lastSeq = e.seq;
    const ts = Date.parse(e.ts);
    tLast = Math.max(tLast, ts);
    const root = ensureRoot(e);
    const a = agentOf(e);
    switch (e.type) {
      case "turn_started":
        nodes[root].start = ts;
        t0 = ts;
        nodes[root].title = "Run";
        nodes[root].subtitle = firstLine(e.input_preview);
        nodes[root].events.push(e);
        a.lastTs = ts;
        break;
      case "reasoning":
        if (e.iteration > 0) {
          startIteration(a, e, e.iteration);
          const it = nodes[a.iter!];
          it.subtitle = firstLine(e.text);
          it.events.push(e);
        } else {
          add(e, "event", container(a), "Reasoning", { subtitle: firstLine(e.text), status: "ok", end: ts });
        }
        break;
      case "code": {
        if (e.iteration > 0) startIteration(a, e, e.iteration);
        const parent = a.iter ?? a.node;
        const n = add(e, "code", parent, "REPL cell", { subtitle: firstLine(e.code) });
        a.code = n.id;
        if (a.iter) nodes[a.iter].events.push(e);
        break;
      }
      case "output": {
        const target = a.code ? nodes[a.code] : null;
        if (target) {
          target.events.push(e);
          if (e.stream === "stderr" && /Traceback|Error/.test(e.text)) target.status = "failed";
          if (!target.subtitle.startsWith("→")) target.subtitle = `→ ${firstLine(e.text, 100)}`;
        } else {
          add(e, "output", container(a), e.stream, { subtitle: firstLine(e.text), status: e.stream === "stderr" ? "warn" : "ok", end: ts });
        }
        break;
      }
      case "repl_variables": {
        const cell = a.code ? nodes[a.code] : null;
        if (!cell) break;
        cell.events.push(e);
        cell.vars = { report: e, previous: a.lastVars };
        a.lastVars = e;
        break;
      }
      case "tool_call": {
        const n = add(e, "tool", container(a), e.name, { ref: e.call_id, subtitle: firstLine(JSON.stringify(e.args)) });
        calls[e.call_id] = n.id;
        a.openTools.push(n.id);
        break;
      }
      case "tool_result": {
        const id = calls[e.call_id];
        if (!id) break;
        nodes[id].events.push(e);
        close(id, ts, e.ok ? "ok" : "failed");
        if (e.latency_ms != null) nodes[id].start = Math.min(nodes[id].start, ts - e.latency_ms);
        a.openTools = a.openTools.filter((t) => t !== id);
        break;
      }
      case "sub_lm_start": {
        let parent = container(a);
        if (e.batch_id) {
          if (!batches[e.batch_id]) {
            batches[e.batch_id] = add(e, "batch", parent, "llm_query_batched", { ref: e.batch_id, subtitle: `${e.batch_size ?? 1} prompts` }, "b").id;
          } else nodes[batches[e.batch_id]].events.push(e);
          parent = batches[e.batch_id];
        }
        const title = e.batch_id ? `Sub-LM #${(e.batch_index ?? 0) + 1}` : `Sub-LM (${e.role})`;
        calls[e.call_id] = add(e, "sub_lm", parent, title, { ref: e.call_id, subtitle: firstLine(e.prompt_preview) }).id;
        if (e.batch_id) {
          const index = (id: string) => { const s0 = nodes[id].events[0]; return s0.type === "sub_lm_start" ? (s0.batch_index ?? 0) : 0; };
          nodes[parent].children.sort((x, y) => index(x) - index(y));
        }
        break;
      }
      case "sub_lm_end": {
        const id = calls[e.call_id];
        if (!id) break;
        const n = nodes[id];
        n.events.push(e);
        n.tokensIn = e.tokens_in;
        n.tokensOut = e.tokens_out;
        close(id, ts, e.ok ? "ok" : "failed");
        const batch = n.parent && nodes[n.parent].kind === "batch" ? nodes[n.parent] : null;
        if (batch) {
          const kids = batch.children.map((c) => nodes[c]);
          const size = kids[0]?.events[0]?.type === "sub_lm_start" ? (kids[0].events[0].batch_size ?? kids.length) : kids.length;
          if (kids.length >= size && kids.every((k) => k.end !== null)) {
            close(batch.id, ts, kids.some((k) => k.status === "failed") ? "failed" : "ok");
          }
          batch.subtitle = `${kids.filter((k) => k.end !== null).length}/${size} done`;
        }
        break;
      }
      case "lm_call": {
        const sub = e.sub_call_id ? calls[e.sub_call_id] : undefined;
        if (sub) {
          const n = nodes[sub];
          n.events.push(e);
          if (!n.tokensIn && !n.tokensOut) {
            n.tokensIn = e.tokens_in;
            n.tokensOut = e.tokens_out;
          }
          n.costUsd = e.cost_usd;
        } else if (e.iteration > 0 && a.iterNo !== e.iteration) a.pendingLm.push(e);
        else addLm(e, e.iteration > 0 && a.iter ? a.iter : container(a));
        break;
      }
      case "child_start": {
        const n = add(e, "child", container(a), `Child RLM · depth ${e.child_depth}`, { ref: e.child_id, subtitle: firstLine(e.task_preview), agentDepth: e.child_depth });
        agents[e.child_id] = { node: n.id, depth: e.child_depth, iter: null, iterNo: null, code: null, lastTs: ts, openTools: [], pendingLm: [], lastVars: null };
        break;
      }
      case "child_end": {
        const child = agents[e.child_id];
        if (!child) break;
        const n = nodes[child.node];
        n.events.push(e);
        close(child.code, ts);
        close(child.iter, ts, e.ok ? "ok" : "failed");
        close(child.node, ts, e.ok ? "ok" : "failed");
        n.subtitle = `${n.subtitle} ${e.ok ? `↳ ${firstLine(e.answer_preview, 80)}` : `✕ ${firstLine(e.error ?? "failed", 80)}`}`;
        if (e.usage) {
          n.tokensIn = e.usage.tokens_in;
          n.tokensOut = e.usage.tokens_out;
          n.costUsd = e.usage.cost_usd;
          fixed.add(n.id);
        }
        break;
      }
      case "usage": {
        const r = nodes[root];
        r.tokensIn = e.tokens_in;
        r.tokensOut = e.tokens_out;
        r.costUsd = e.cost_usd;
        fixed.add(r.id);
        break;
      }
      case "final":
      case "summary":
        nodes[root].events.push(e);
        break;
      case "turn_finished":
      case "turn_failed":
      case "turn_cancelled":
      case "turn_interrupted": {
        finished = true;
        const status = END_STATUS[e.type];
        nodes[root].events.push(e);
        for (const n of Object.values(nodes)) if (n.end === null) close(n.id, ts, status === "ok" ? "ok" : status);
        // a budget or the time limit stopped it: the run is partial, drawn amber like its budget marker
        nodes[root].status = e.type === "turn_finished" && e.outcome === "partial" ? "warn" : status;
        break;
      }
      case "route_decision":
        add(e, "event", container(a), `Route: ${e.mode}`, { subtitle: e.reason, status: "ok", end: ts });
        break;
      case "context_loaded":
        add(e, "event", container(a), `Context: ${e.name}`, { subtitle: `${e.chars.toLocaleString()} chars${e.variable ? ` as ${e.variable}` : ""}`, status: "ok", end: ts });
        break;
      case "warning":
        add(e, "event", container(a), "Warning", { subtitle: e.message, status: "warn", end: ts });
        break;
      case "error":
        add(e, "event", container(a), "Error", { subtitle: e.message, status: "failed", end: ts });
        break;
      case "budget_exhausted":
        add(e, "event", container(a), `Budget: ${e.budget}`, { subtitle: `${e.used} of ${e.limit}`, status: "warn", end: ts });
        break;
      case "sandbox_reset":
        add(e, "event", container(a), "Sandbox reset", { subtitle: e.reason, status: "warn", end: ts });
        break;
      case "repl_restored": {
        // a fork or a resumed run loaded the REPL from a snapshot: amber when something did not come back
        const missing = Object.keys(e.not_restored);
        const subtitle = `${e.restored.length} restored${missing.length ? `; not restored: ${missing.join(", ")}` : ""}`;
        add(e, "event", container(a), `REPL restored (${e.source})`, { subtitle, status: missing.length ? "warn" : "ok", end: ts });
        break;
      }
      case "memory_updated":
        add(e, "event", container(a), "Memory", { subtitle: e.path, status: "ok", end: ts });
        break;
      case "artifact_created":
        add(e, "event", container(a), `Artifact: ${e.name}`, { subtitle: `${e.size_bytes} bytes`, status: "ok", end: ts });
        break;
      default:
        break;
    }
    // usage, status and lm_call events must not stretch the span of the step before them (an LM call belongs
    // to the iteration it generates)
    if (e.type !== "usage" && e.type !== "status" && e.type !== "lm_call") a.lastTs = Math.max(a.lastTs, ts);
  }
  for (const a of Object.values(agents)) for (const c of a.pendingLm) addLm(c, a.iter ?? a.node);
  if (rootId) sumTokens(nodes, rootId, fixed);
  return { nodes, rootId, t0, tLast, finished };
}

/** Totals roll up: a span's tokens and cost are its own plus its children's. The run (usage event) and a child
 *  RLM that reported usage keep their reported totals, which already include everything below them. */
function sumTokens(nodes: Record<string, TreeNode>, id: string, fixed: Set<string>): [number, number, number | null] {
  const n = nodes[id];
  let tin = 0;
  let tout = 0;
  let usd: number | null = null;
  for (const c of n.children) {
    const [i, o, d] = sumTokens(nodes, c, fixed);
    tin += i;
    tout += o;
    if (d !== null) usd = (usd ?? 0) + d;
  }
  if (!fixed.has(id)) {
    n.tokensIn += tin;
    n.tokensOut += tout;
    if (usd !== null) n.costUsd = (n.costUsd ?? 0) + usd;
  }
  return [n.tokensIn, n.tokensOut, n.costUsd];
}

export interface Row {
  id: string;
  level: number;
}

/** The visible rows, depth first, skipping the descendants of collapsed nodes. */
export function visibleRows(tree: RunTree, collapsed: ReadonlySet<string>): Row[] {
  const rows: Row[] = [];
  if (!tree.rootId) return rows;
  const stack: Row[] = [{ id: tree.rootId, level: 0 }];
  while (stack.length) {
    const row = stack.pop()!;
    rows.push(row);
    if (collapsed.has(row.id)) continue;
    const kids = tree.nodes[row.id].children;
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ id: kids[i], level: row.level + 1 });
  }
  return rows;
}

/** Ancestors of a node (to expand the path to a deep-linked node). */
export function ancestors(tree: RunTree, id: string): string[] {
  const out: string[] = [];
  let cur = tree.nodes[id]?.parent ?? null;
  while (cur) {
    out.push(cur);
    cur = tree.nodes[cur].parent;
  }
  return out;
}

/** The node containing an event seq (a deep link may name any event's seq). */
export function nodeForSeq(tree: RunTree, seq: number): string | null {
  if (tree.nodes[String(seq)]) return String(seq);
  for (const n of Object.values(tree.nodes)) if (n.events.some((e) => e.seq === seq)) return n.id;
  return null;
}
