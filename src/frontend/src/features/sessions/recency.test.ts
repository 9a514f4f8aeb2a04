import { describe, expect, it } from "vitest";
import type { Schemas } from "../../lib/api/client";
import { groupByRecency, recencyLabel } from "./recency";

const now = new Date(2026, 11, 1, 15, 0);
const at = (d: Date) => ({ id: d.toISOString(), title: "", updated_at: d.toISOString() }) as Schemas["SessionOut"];

describe("recency groups", () => {
  it("labels by calendar day, not by 24-hour windows", () => {
    expect(recencyLabel(new Date(2026, 11, 1, 0, 5), now)).toBe("Today");
    expect(recencyLabel(new Date(2026, 10, 30, 23, 59), now)).toBe("Yesterday");
    expect(recencyLabel(new Date(2026, 10, 26), now)).toBe("Previous 7 days");
    expect(recencyLabel(new Date(2026, 10, 5), now)).toBe("Previous 30 days");
    expect(recencyLabel(new Date(2025, 0, 1), now)).toBe("Older");
  });

  it("keeps the list order inside each group and skips empty groups", () => {
    const groups = groupByRecency([at(new Date(2026, 11, 1, 14)), at(new Date(2026, 11, 1, 9)), at(new Date(2025, 5, 1))], now);
    expect(groups.map(([l, s]) => [l, s.length])).toEqual([["Today", 2], ["Older", 1]]);
  });
});
