// Who spawned whom: the root agent and every child RLM as a small top-down graph (@xyflow/react). Loaded
// lazily, so the flow library is fetched only when someone opens the graph.
import { Background, Controls, ReactFlow, type Edge, type Node } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useMemo } from "react";
import type { RunTree, TreeNode } from "../../../lib/events/tree";
import { useTheme } from "../../../lib/theme";
import { duration } from "../format";

const W = 190;
const GAP = 24;

/** The agents (the run and its child RLMs), each with the id of the agent that spawned it. */
function agents(tree: RunTree): { node: TreeNode; parent: string | null }[] {
  const out: { node: TreeNode; parent: string | null }[] = [];
  const walk = (id: string, owner: string | null) => {
    const n = tree.nodes[id];
    const isAgent = n.kind === "run" || n.kind === "child";
    if (isAgent) out.push({ node: n, parent: owner });
    for (const c of n.children) walk(c, isAgent ? n.id : owner);
  };
  if (tree.rootId) walk(tree.rootId, null);
  return out;
}

const COLOR: Record<TreeNode["status"], string> = { running: "var(--accent)", ok: "var(--ok)", failed: "var(--err)", warn: "var(--warn)", cancelled: "var(--muted)" };

export default function RecursionGraph({ tree, selected, onSelect }: { tree: RunTree; selected: string | null; onSelect: (id: string) => void }) {
  const { resolved } = useTheme();
  const { nodes, edges } = useMemo(() => {
    const list = agents(tree);
    const kids: Record<string, string[]> = {};
    for (const a of list) if (a.parent) (kids[a.parent] ??= []).push(a.node.id);
    const x: Record<string, number> = {};
    let next = 0;
    const place = (id: string): number => {
      const cs = kids[id] ?? [];
      if (!cs.length) return (x[id] = next++);
      const xs = cs.map(place);
      return (x[id] = (xs[0] + xs[xs.length - 1]) / 2);
    };
    if (tree.rootId) place(tree.rootId);
    const iterations = (n: TreeNode) => n.children.filter((c) => tree.nodes[c].kind === "iteration").length;
    const task = (n: TreeNode) => {
      const e = n.events.find((x) => x.type === "child_start" || x.type === "turn_started");
      const text = e?.type === "child_start" ? e.task_preview : e?.type === "turn_started" ? e.input_preview : n.subtitle;
      return text.length > 60 ? `${text.slice(0, 60)}…` : text;
    };
    const nodes: Node[] = list.map(({ node: n }) => ({
      id: n.id,
      position: { x: x[n.id] * (W + GAP), y: n.agentDepth * 110 },
      data: { label: `${n.kind === "run" ? "Root" : `Depth ${n.agentDepth}`}: ${task(n)}\n${n.status} · ${iterations(n)} iter · ${duration((n.end ?? tree.tLast) - n.start)}` },
      style: { width: W, whiteSpace: "pre-wrap", fontSize: 11, borderColor: COLOR[n.status], borderWidth: n.id === selected ? 3 : 1.5, background: "var(--panel)", color: "var(--text)" },
      ariaLabel: `${n.title}, ${n.status}`,
    }));
    const edges: Edge[] = list.filter((a) => a.parent).map((a) => ({ id: `${a.parent}-${a.node.id}`, source: a.parent!, target: a.node.id, animated: a.node.status === "running" }));
    return { nodes, edges };
  }, [tree, selected]);

  // fitting never magnifies past 1:1 (one root alone would fill the pane), so zooming in stays possible
  const single = nodes.length === 1;
  return (
    <div className="rounded-lg border border-line bg-panel" data-testid="recursion-graph">
      {single && <p className="muted m-0 px-3 pt-2 text-[12px]" role="note">No child RLMs: this run did not recurse.</p>}
      <div className={single ? "h-[9rem]" : "h-[22rem]"}>
        <ReactFlow nodes={nodes} edges={edges} fitView fitViewOptions={{ maxZoom: 1, padding: 0.2 }} minZoom={0.2} maxZoom={2}
          nodesDraggable={false} nodesConnectable={false} onNodeClick={(_, n) => onSelect(n.id)}
          proOptions={{ hideAttribution: true }} colorMode={resolved}>
          <Background />
          <Controls showInteractive={false} />
        </ReactFlow>
      </div>
    </div>
  );
}
