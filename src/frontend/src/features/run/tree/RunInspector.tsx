// The run tree, its recursion graph (one click away, loaded on demand) and the selected node's detail. The
// selection lives in the URL (?run=<id>&node=<seq>), so a link opens the same step for anyone. The detail sits
// beside the tree only when the inspector itself (not the window: the side panels take their share) is wide
// enough for both; otherwise it goes below the tree, which keeps the full width for its labels.
import { lazy, Suspense, useEffect, useMemo, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import type { FleetEvent } from "../../../lib/api/events.gen";
import { ancestors, buildTree, nodeForSeq } from "../../../lib/events/tree";
import { FeedbackBadge } from "./FeedbackBadge";
import { NodeDetail } from "./NodeDetail";
import { RunTreeView } from "./RunTree";

const RecursionGraph = lazy(() => import("./RecursionGraph"));

export function RunInspector({ runId, events }: { runId: string; events: FleetEvent[] }) {
  const tree = useMemo(() => buildTree(events), [events]);
  const [params, setParams] = useSearchParams();
  const linked = params.get("run") === runId ? params.get("node") : null;
  const selected = linked && tree.nodes[linked] ? linked : linked ? nodeForSeq(tree, Number(linked)) : null;
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const [view, setView] = useState<"tree" | "graph">("tree");
  const detail = useRef<HTMLDivElement>(null);

  // a deep link opens the path to its node
  useEffect(() => {
    if (!selected) return;
    const path = ancestors(tree, selected);
    if (path.some((id) => collapsed.has(id))) setCollapsed((c) => new Set([...c].filter((id) => !path.includes(id))));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [selected]);

  const select = (id: string | null) => {
    const next = new URLSearchParams(params);
    if (id) {
      next.set("run", runId);
      next.set("node", id);
    } else {
      next.delete("run");
      next.delete("node");
    }
    setParams(next, { replace: true, preventScrollReset: true });
    // stacked below the tree, the detail may start off screen: bring it into view when a step is picked
    if (id) requestAnimationFrame(() => detail.current?.scrollIntoView?.({ block: "nearest" }));
  };
  const toggle = (id: string) => setCollapsed((c) => {
    const n = new Set(c);
    if (n.has(id)) n.delete(id);
    else n.add(id);
    return n;
  });
  const collapsible = Object.values(tree.nodes).filter((n) => n.children.length && n.kind !== "run").map((n) => n.id);
  if (!tree.rootId) return null;
  const link = `${window.location.pathname}?run=${runId}&node=${selected ?? ""}`;

  return (
    <div className="@container min-w-0" data-testid="run-inspector">
      <div className="mb-1 flex flex-wrap items-center gap-2 text-[12px]">
        <div role="group" aria-label="Run view" className="inline-flex overflow-hidden rounded-md border border-line">
          {(["tree", "graph"] as const).map((v) => (
            <button key={v} type="button" aria-pressed={view === v} onClick={() => setView(v)}
              className={`!rounded-none !border-0 !px-2 !py-0.5 ${view === v ? "!bg-accent !text-[var(--accent-text)]" : ""}`}>
              {v === "tree" ? "Timeline" : "Recursion graph"}
            </button>
          ))}
        </div>
        {view === "tree" && (
          <>
            <button type="button" className="!px-2 !py-0.5" onClick={() => setCollapsed(new Set())}>Expand all</button>
            <button type="button" className="!px-2 !py-0.5" onClick={() => setCollapsed(new Set(collapsible))}>Collapse all</button>
          </>
        )}
        <span className="muted">{Object.keys(tree.nodes).length.toLocaleString()} spans</span>
        <FeedbackBadge runId={runId} />
      </div>
      <div className={`grid grid-cols-[minmax(0,1fr)] gap-3 ${selected ? "@min-[60rem]:grid-cols-[minmax(0,1fr)_minmax(18rem,24rem)] @min-[80rem]:grid-cols-[minmax(0,1fr)_28rem]" : ""}`}
        data-testid="inspector-grid">
        {view === "tree" ? (
          <RunTreeView tree={tree} selected={selected} onSelect={select} collapsed={collapsed} onToggle={toggle} />
        ) : (
          <Suspense fallback={<div className="state" role="status">Loading graph…</div>}>
            <RecursionGraph tree={tree} selected={selected} onSelect={select} />
          </Suspense>
        )}
        {selected && <div ref={detail} className="min-w-0 self-start @min-[60rem]:sticky @min-[60rem]:top-0"><NodeDetail tree={tree} id={selected} link={link} onClose={() => select(null)} /></div>}
      </div>
    </div>
  );
}
