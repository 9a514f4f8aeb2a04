// The run as a collapsible tree on one shared time axis (a waterfall): each row is a span with its status,
// tokens and a duration bar. Rows are virtualized, so a run with thousands of steps scrolls smoothly; the
// axis follows the clock while the run is live. Arrow keys move, Left/Right collapse and expand, Home/End jump
// (the list of shortcuts is features/shortcuts/shortcuts.ts).
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, type KeyboardEvent } from "react";
import type { RunTree as Tree, TreeNode } from "../../../lib/events/tree";
import { visibleRows } from "../../../lib/events/tree";
import { duration, tokens } from "../format";
import { useNow } from "../useNow";

const ROW = 30;

const KIND_LABEL: Record<TreeNode["kind"], string> = {
  run: "run", iteration: "iter", lm: "LM", code: "cell", output: "out", tool: "tool", sub_lm: "LM", batch: "batch", child: "RLM", event: "·",
};
const BAR: Record<TreeNode["status"], string> = {
  running: "bg-accent animate-pulse", ok: "bg-ok", failed: "bg-err", warn: "bg-warn", cancelled: "bg-muted",
};
export const STATUS_TEXT: Record<TreeNode["status"], string> = {
  running: "running", ok: "ok", failed: "failed", warn: "warning", cancelled: "cancelled",
};

export function RunTreeView({ tree, selected, onSelect, collapsed, onToggle }: {
  tree: Tree;
  selected: string | null;
  onSelect: (id: string) => void;
  collapsed: ReadonlySet<string>;
  onToggle: (id: string) => void;
}) {
  const rows = useMemo(() => visibleRows(tree, collapsed), [tree, collapsed]);
  const scroller = useRef<HTMLDivElement>(null);
  const live = !tree.finished;
  const now = useNow(live);
  const t0 = tree.t0;
  const t1 = live ? Math.max(tree.tLast, now) : tree.tLast;
  const span = Math.max(1, t1 - t0);
  const virtual = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 12 });
  const index = rows.findIndex((r) => r.id === selected);

  useEffect(() => {
    if (index >= 0) virtual.scrollToIndex(index, { align: "auto" });
    // scroll only when the selection changes, not on every live update
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [selected]);

  const onKey = (e: KeyboardEvent) => {
    const at = index < 0 ? 0 : index;
    const node = rows[at] ? tree.nodes[rows[at].id] : null;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const next = index < 0 ? rows[0] : rows[Math.min(rows.length - 1, Math.max(0, at + (e.key === "ArrowDown" ? 1 : -1)))];
      if (next) onSelect(next.id);
    } else if ((e.key === "Home" || e.key === "End") && rows.length) {
      e.preventDefault();
      onSelect(rows[e.key === "Home" ? 0 : rows.length - 1].id);
    } else if (node && e.key === "ArrowRight" && node.children.length && collapsed.has(node.id)) {
      e.preventDefault();
      onToggle(node.id);
    } else if (node && e.key === "ArrowLeft") {
      e.preventDefault();
      if (node.children.length && !collapsed.has(node.id)) onToggle(node.id);
      else if (node.parent) onSelect(node.parent);
    }
  };

  const ticks = [0, 0.5, 1];
  return (
    <div className="@container rounded-lg border border-line bg-panel" data-testid="run-tree">
      <div className="grid grid-cols-[minmax(0,1fr)_28%] gap-2 border-b border-line px-2 py-1 text-[11px] text-muted @min-[36rem]:grid-cols-[minmax(0,1fr)_4.5rem_32%]">
        <span>Step</span>
        <span className="hidden text-right @min-[36rem]:block">Tokens</span>
        <span className="relative h-4" aria-hidden="true">
          {ticks.map((f) => (
            <span key={f} className={`absolute top-0 -translate-x-1/2 whitespace-nowrap tabular-nums first:translate-x-0 last:-translate-x-full ${f === 0.5 ? "hidden @min-[36rem]:inline" : ""}`} style={{ left: `${f * 100}%` }}>
              {duration(span * f)}
            </span>
          ))}
        </span>
      </div>
      <div ref={scroller} className="max-h-[26rem] overflow-auto" role="tree" aria-label="Run steps" tabIndex={0} onKeyDown={onKey}
        aria-activedescendant={selected ? `node-${selected}` : undefined}>
        <div className="relative w-full" style={{ height: virtual.getTotalSize() }}>
          {virtual.getVirtualItems().map((item) => {
            const row = rows[item.index];
            const n = tree.nodes[row.id];
            const end = n.end ?? t1;
            const left = ((n.start - t0) / span) * 100;
            const width = Math.max(((end - n.start) / span) * 100, 0.4);
            const open = !collapsed.has(n.id);
            const isSel = n.id === selected;
            return (
              <div key={n.id} id={`node-${n.id}`} role="treeitem" aria-level={row.level + 1} aria-selected={isSel}
                aria-expanded={n.children.length ? open : undefined} aria-posinset={item.index + 1} aria-setsize={rows.length}
                data-kind={n.kind} data-status={n.status} data-node={n.id}
                className={`absolute left-0 top-0 grid w-full cursor-pointer grid-cols-[minmax(0,1fr)_28%] items-center gap-2 px-2 text-[13px] @min-[36rem]:grid-cols-[minmax(0,1fr)_4.5rem_32%] ${isSel ? "bg-panel-2 outline outline-1 outline-accent" : "hover:bg-panel-2"}`}
                style={{ height: ROW, transform: `translateY(${item.start}px)` }}
                onClick={() => onSelect(n.id)}>
                <span className="flex min-w-0 items-center gap-1 [--indent:7px] @min-[36rem]:[--indent:12px]" style={{ paddingLeft: `calc(${row.level} * var(--indent))` }}
                  title={n.subtitle ? `${n.title} — ${n.subtitle}` : n.title}>
                  {n.children.length ? (
                    <button type="button" tabIndex={-1} aria-label={open ? `Collapse ${n.title}` : `Expand ${n.title}`}
                      className="!border-0 !bg-transparent !p-0 w-4 shrink-0 text-muted" onClick={(e) => (e.stopPropagation(), onToggle(n.id))}>
                      {open ? "▾" : "▸"}
                    </button>
                  ) : <span className="w-4 shrink-0" />}
                  <span className={`shrink-0 rounded px-1 text-[10px] font-semibold uppercase tracking-wide ${n.kind === "child" ? "bg-accent text-[var(--accent-text)]" : "bg-panel-2 text-muted"}`}>{KIND_LABEL[n.kind]}</span>
                  <span className="min-w-0 max-w-[65%] shrink-0 truncate font-medium">{n.title}</span>
                  <span className="min-w-0 flex-1 truncate text-muted">{n.subtitle}</span>
                  <span className="sr-only">, {STATUS_TEXT[n.status]}</span>
                </span>
                <span className="hidden text-right text-[12px] tabular-nums text-muted @min-[36rem]:block">{n.tokensIn + n.tokensOut ? tokens(n.tokensIn + n.tokensOut) : ""}</span>
                <span className="relative h-3" title={`${duration(end - n.start)} (+${duration(n.start - t0)})`}>
                  <span className="absolute inset-y-0 left-0 right-0 rounded bg-panel-2" />
                  <span className={`absolute inset-y-0 rounded ${BAR[n.status]}`} style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }} />
                </span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
