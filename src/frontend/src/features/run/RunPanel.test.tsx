import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, waitFor } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { ev, resetSeq } from "../../test/events";
import { applyEvents, emptyTimeline } from "../../lib/events/timeline";
import type { RunView } from "../../lib/events/useRun";
import { RunPanel } from "./RunPanel";
import { MemoryRouter } from "react-router";
import type { FleetEvent } from "../../lib/api/events.gen";

const renderPanel = (view: Omit<RunView, "timeline" | "events">, events: FleetEvent[], onRetry?: () => void) =>
  render(
    <MemoryRouter>
      <QueryClientProvider client={new QueryClient()}>
        <RunPanel view={{ ...view, events, timeline: applyEvents(emptyTimeline("run1"), events) }} onRetry={onRetry} />
      </QueryClientProvider>
    </MemoryRouter>,
  );

beforeEach(resetSeq);

describe("RunPanel", () => {
  it("shows a running run with its status, counters and a Stop button", () => {
    renderPanel({ connection: "live", error: null }, [ev("turn_started"), ev("status", { message: "starting sandbox" })]);
    expect(screen.getByTestId("run-phase").textContent).toBe("running");
    expect(screen.getByRole("status").textContent).toContain("starting sandbox");
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
  });

  it("shows a queued run as queued, waiting for a worker, and still offers Stop", () => {
    renderPanel({ connection: "live", error: null }, [ev("turn_queued", { queue: "turns" })]);
    expect(screen.getByTestId("run-phase").textContent).toBe("queued");
    expect(screen.getByRole("status").textContent).toContain("queued: waiting for a worker");
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
  });

  it("renders the final answer as sanitized Markdown and offers feedback", async () => {
    const { container } = renderPanel({ connection: "ended", error: null }, [
      ev("turn_started"),
      ev("final", { answer: "**bold** <script>alert(1)</script> [x](javascript:alert(1))", fields: {} }),
      ev("turn_finished", { mode: "direct", duration_ms: 3 }),
    ]);
    expect(screen.getByTestId("run-phase").textContent).toBe("succeeded");
    const answer = screen.getByTestId("answer");
    await waitFor(() => expect(answer.querySelector("strong")?.textContent).toBe("bold"), { timeout: 15_000 });
    expect(container.querySelector("script")).toBeNull();
    expect(answer.querySelector("a")?.getAttribute("href") ?? "").not.toContain("javascript");
    expect(screen.getByRole("button", { name: "Good" })).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Stop" })).toBeNull();
  });

  it("shows a failure with its action and a reconnecting badge", () => {
    let retried = 0;
    renderPanel({ connection: "reconnecting", error: null }, [ev("turn_failed", { code: "lm_unreachable", message: "no LM", action: "check DSPY_LM_API_BASE" })], () => retried++);
    expect(screen.getByRole("alert").textContent).toContain("check DSPY_LM_API_BASE");
    expect(screen.getByText("reconnecting…")).toBeTruthy();
    expect(screen.getByTestId("cost").textContent).toBe("$0");
    screen.getByRole("button", { name: "Retry" }).click();
    expect(retried).toBe(1);
  });

  it("names a run a budget stopped as partial (amber), not done", () => {
    renderPanel({ connection: "ended", error: null }, [
      ev("turn_started"),
      ev("budget_exhausted", { budget: "turn_timeout_s", limit: 10, used: 10.2 }),
      ev("final", { answer: "so far", fields: { partial: true } }),
      ev("usage", { tokens_in: 5, tokens_out: 5, cost_usd: 0.5, cost_known: true, lm_calls: 1, iterations: 1, by_role: {} }),
      ev("turn_finished", { mode: "rlm", duration_ms: 10_200 }),
    ]);
    expect(screen.getByTestId("run-phase").textContent).toBe("partial");
    expect(screen.getByTestId("run-phase").className).toContain("warn");
    expect(screen.getByTestId("partial-reason").textContent).toContain("the time limit");
    expect(screen.getByText("1 REPL step")).toBeTruthy();
    expect(screen.getByTestId("cost").textContent).toBe("$0.50");
  });
});
