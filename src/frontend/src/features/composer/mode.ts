// The mode chosen for a session survives reloads (kept in this browser, per session; "new" before one exists).
import type { TurnFrame } from "../../lib/events/socket";

export type Mode = NonNullable<TurnFrame["execution_mode"]>;
const MODES: readonly Mode[] = ["auto", "direct", "tools", "rlm"];
const key = (sessionId?: string) => `fleet.mode.${sessionId ?? "new"}`;

export function savedMode(sessionId?: string): Mode {
  try {
    const value = localStorage.getItem(key(sessionId)) ?? (sessionId ? null : "auto");
    return MODES.includes(value as Mode) ? (value as Mode) : "auto";
  } catch {
    return "auto";
  }
}

export function rememberMode(sessionId: string | undefined, mode: Mode): void {
  try {
    localStorage.setItem(key(sessionId), mode);
  } catch {
    /* storage disabled: the choice lasts for this page only */
  }
}
