// The session side panel (Radix tabs): Context, Artifacts, Memory. Beside the conversation on wide screens;
// a full-width drawer over it on narrow ones (no horizontal scroll at 390 px).
import * as Tabs from "@radix-ui/react-tabs";
import { useState } from "react";
import { ArtifactsTab } from "./ArtifactsTab";
import { ContextTab, type LiveContext } from "./ContextTab";
import { MemoryTab } from "./MemoryTab";

const TAB_KEY = "fleet.panel.tab";
const TABS = ["context", "artifacts", "memory"] as const;
type Tab = (typeof TABS)[number];

function savedTab(): Tab {
  try {
    const value = localStorage.getItem(TAB_KEY);
    return TABS.includes(value as Tab) ? (value as Tab) : "context";
  } catch {
    return "context";
  }
}

const trigger = "session-tab";

export function SessionPanel({ sessionId, live = null, onClose }: { sessionId: string; live?: LiveContext | null; onClose: () => void }) {
  const [tab, setTab] = useState<Tab>(savedTab);
  const choose = (value: string) => {
    setTab(value as Tab);
    try {
      localStorage.setItem(TAB_KEY, value);
    } catch {
      /* storage disabled: the choice lasts for this page only */
    }
  };
  return (
    <aside id="session-panel" className="session-panel" aria-label="Session panel">
      <Tabs.Root value={tab} onValueChange={choose} className="flex min-h-0 flex-1 flex-col">
        <div className="flex items-center gap-1 border-b border-line px-2">
          <Tabs.List className="flex min-w-0 grow" aria-label="Session panel sections">
            <Tabs.Trigger value="context" className={trigger}>Context</Tabs.Trigger>
            <Tabs.Trigger value="artifacts" className={trigger}>Artifacts</Tabs.Trigger>
            <Tabs.Trigger value="memory" className={trigger}>Memory</Tabs.Trigger>
          </Tabs.List>
          <button type="button" className="panel-close" onClick={onClose} aria-label="Close the session panel">✕</button>
        </div>
        <Tabs.Content value="context" className="min-h-0 flex-1 overflow-auto p-2.5"><ContextTab sessionId={sessionId} live={live} /></Tabs.Content>
        <Tabs.Content value="artifacts" className="min-h-0 flex-1 overflow-auto p-2.5"><ArtifactsTab sessionId={sessionId} /></Tabs.Content>
        <Tabs.Content value="memory" className="min-h-0 flex-1 overflow-auto p-2.5"><MemoryTab /></Tabs.Content>
      </Tabs.Root>
    </aside>
  );
}

const OPEN_KEY = "fleet.panel.open";

/** Open by default on wide screens, closed on narrow ones; the user's choice is kept in this browser. */
export function usePanelOpen(): [boolean, (open: boolean) => void] {
  const [open, setOpenState] = useState(() => {
    try {
      const saved = localStorage.getItem(OPEN_KEY);
      if (saved !== null && !window.matchMedia?.("(max-width: 760px)").matches) return saved === "1";
    } catch {
      /* fall through to the default */
    }
    return !window.matchMedia?.("(max-width: 760px)").matches;
  });
  const setOpen = (value: boolean) => {
    setOpenState(value);
    try {
      if (!window.matchMedia?.("(max-width: 760px)").matches) localStorage.setItem(OPEN_KEY, value ? "1" : "0");
    } catch {
      /* storage disabled */
    }
  };
  return [open, setOpen];
}
