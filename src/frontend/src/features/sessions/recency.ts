// Sessions grouped by when they were last used, newest group first (the list is already newest first).
import type { Schemas } from "../../lib/api/client";

type Session = Schemas["SessionOut"];
const DAY = 86_400_000;

export function recencyLabel(updated: Date, now: Date): string {
  const today = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  const t = updated.getTime();
  if (t >= today) return "Today";
  if (t >= today - DAY) return "Yesterday";
  if (t >= today - 7 * DAY) return "Previous 7 days";
  if (t >= today - 30 * DAY) return "Previous 30 days";
  return "Older";
}

export function groupByRecency(items: Session[], now: Date): [string, Session[]][] {
  const order = ["Today", "Yesterday", "Previous 7 days", "Previous 30 days", "Older"];
  const groups = new Map<string, Session[]>();
  for (const s of items) {
    const label = recencyLabel(new Date(s.updated_at), now);
    groups.set(label, [...(groups.get(label) ?? []), s]);
  }
  return order.filter((l) => groups.has(l)).map((l) => [l, groups.get(l)!]);
}
