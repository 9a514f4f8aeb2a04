// Context tab: the sources the session holds (every next turn gets them), where each came from, its size, the turn
// that added it and the REPL variable holding it; each can be removed from the session.
import { Empty, ErrorView, Loading } from "../../components/States";
import type { Schemas } from "../../lib/api/client";
import type { FleetEvent } from "../../lib/api/events.gen";
import { formatBytes } from "../composer/Attachments";
import { useRemoveContextSource, useSessionContext } from "./queries";

const SOURCE_LABEL: Record<string, string> = {
  file: "file", attachment: "attachment", text: "pasted text", url: "URL", repository: "repository",
  workspace: "workspace file", history: "history", other: "other",
};

export function contextSize(item: Pick<Schemas["ContextSourceOut"], "chars" | "bytes">): string {
  const chars = `${item.chars.toLocaleString("en-US")} chars`;
  return item.bytes != null ? `${chars} · ${formatBytes(item.bytes)}` : chars;
}

/** The current run's root `context_loaded` events, as they stream: the panel shows them before they are stored. */
export interface LiveContext {
  sessionId: string;
  runId: string;
  /** The turn the run belongs to, counting from 1. */
  turn: number;
  events: FleetEvent[];
}

/** The stored list, with the live run's documents taken from its events (the store may not have them yet). */
export function mergeLive(stored: Schemas["ContextSourceOut"][], live: LiveContext | null): Schemas["ContextSourceOut"][] {
  if (!live || live.events.length === 0) return stored;
  // A held source the session already lists is loaded again by reference (`from_turn` set): list it once.
  const streamed = live.events.flatMap((e) => e.type === "context_loaded" && e.from_turn == null
    ? [{ turn: live.turn, run_id: e.run_id, source: e.source, name: e.name, chars: e.chars, bytes: e.bytes, variable: e.variable, truncated: e.truncated, loaded_at: e.ts }]
    : []);
  return [...stored.filter((item) => item.run_id !== live.runId), ...streamed];
}

export function ContextTab({ sessionId, live = null }: { sessionId: string; live?: LiveContext | null }) {
  const context = useSessionContext(sessionId);
  const remove = useRemoveContextSource(sessionId);
  if (context.isPending && !live?.events.length) return <Loading />;
  if (context.error) return <ErrorView error={context.error} retry={() => void context.refetch()} />;
  const items = mergeLive(context.data?.items ?? [], live);
  if (items.length === 0) return <Empty>No context in this session yet. Attach files, paste text or give URLs in the composer: every later turn gets them.</Empty>;
  const held = items.some((item) => item.id);
  return (
    <div className="space-y-2">
      {held && <p className="muted m-0 text-[12px]">Every next turn of this session gets these, without uploading them again.</p>}
      {remove.error && <ErrorView error={remove.error} />}
      <ul className="m-0 list-none space-y-2 p-0" aria-label="Context documents">
        {items.map((item, i) => (
          <li key={item.id ?? `${item.run_id}-${i}`} className="rounded-md border border-line bg-panel px-2.5 py-1.5" data-testid="context-item">
            <div className="flex min-w-0 items-baseline gap-2">
              <strong className="min-w-0 grow break-words text-[13px]">{item.name}</strong>
              <span className="badge shrink-0">{SOURCE_LABEL[item.source] ?? item.source}</span>
              {item.id && (
                <button
                  type="button"
                  className="danger shrink-0 px-1.5 py-0 text-[12px]"
                  aria-label={`Remove ${item.name} from the session`}
                  title="Remove from the session: the next turn no longer gets it"
                  disabled={remove.isPending}
                  onClick={() => remove.mutate(item.id!)}
                >
                  Remove
                </button>
              )}
            </div>
            <div className="muted text-[12px]">
              {contextSize(item)} · turn {item.turn}
              {item.variable && <> · <code>{item.variable}</code></>}
              {item.truncated && <span className="warn-text"> · cut to the size limit</span>}
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}
