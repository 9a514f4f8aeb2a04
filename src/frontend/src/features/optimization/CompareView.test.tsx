import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { CompareView } from "./CompareView";
import type { Compare } from "./queries";

const base: Compare = {
  a: { id: "run_a", module: "direct", scores: { baseline: 0.5, optimized: 0.6 } },
  b: { id: "run_b", module: "direct", scores: { baseline: 0.5, optimized: 0.8 } },
  same_module: true,
  delta: 0.2,
  examples: [
    { index: 0, a: 0.6, b: 1, delta: 0.4 },
    { index: 1, a: 0.8, b: 0.6, delta: -0.2 },
    { index: 2, a: null, b: 0.8, delta: null },
  ],
  better: 1,
  worse: 1,
};

describe("CompareView", () => {
  it("shows both runs side by side with the overall delta and per-example deltas", () => {
    render(<CompareView data={base} />);
    expect(within(screen.getByLabelText("Run A")).getByText("run_a")).toBeTruthy();
    expect(within(screen.getByLabelText("Run B")).getByText("0.800")).toBeTruthy();
    const delta = screen.getByTestId("compare-delta");
    expect(delta.textContent).toBe("+0.200");
    expect(delta.className).toBe("ok-text");
    const summary = screen.getByLabelText("Comparison summary").textContent ?? "";
    expect(summary).toContain("Better in B 1");
    expect(summary).toContain("Worse in B 1");
    expect(summary).toContain("Same or missing 1");
    const rows = within(screen.getByRole("table", { name: "Per-example comparison" })).getAllByRole("row");
    expect(rows.map((r) => r.textContent)).toEqual([
      "ExampleA optimizedB optimizedDelta",
      "00.6001.000+0.400",
      "10.8000.600-0.200",
      "2–0.800–",
    ]);
    expect(screen.queryByRole("note")).toBeNull();
  });

  it("warns when the runs optimized different modules and says when there are no examples", () => {
    render(<CompareView data={{ ...base, b: { id: "run_b", module: "router", scores: {} }, same_module: false, delta: null, examples: [], better: 0, worse: 0 }} />);
    expect(screen.getByRole("note").textContent).toContain("direct vs router");
    expect(screen.getByTestId("compare-delta").textContent).toBe("–");
    expect(screen.getByText("Neither run recorded per-example results.")).toBeTruthy();
  });
});
