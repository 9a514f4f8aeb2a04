import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { ev, resetSeq } from "../../test/events";
import { applyEvents, emptyTimeline } from "../../lib/events/timeline";
import type { RunView } from "../../lib/events/useRun";
import { RunPanel } from "./RunPanel";

const renderPanel = (view: RunView) =>
  render(<QueryClientProvider client={new QueryClient()}><RunPanel view={view} /></QueryClientProvider>);

beforeEach(resetSeq);

describe("RunPanel", () => {
  it("shows a running run with its status, counters and a Cancel button", () => {
    const timeline = applyEvents(emptyTimeline("run1"), [ev("turn_started"), ev("status", { message: "starting sandbox" })]);
    renderPanel({ timeline, connection: "live", error: null });
    expect(screen.getByTestId("run-phase").textContent).toBe("running");
    expect(screen.getByRole("status").textContent).toContain("starting sandbox");
    expect(screen.getByRole("button", { name: "Cancel run" })).toBeTruthy();
  });

  it("renders the final answer as sanitized Markdown and offers feedback", () => {
    const timeline = applyEvents(emptyTimeline("run1"), [
      ev("turn_started"),
      ev("final", { answer: "**bold** <script>alert(1)</script> [x](javascript:alert(1))", fields: {} }),
      ev("turn_finished", { mode: "direct", duration_ms: 3 }),
    ]);
    const { container } = renderPanel({ timeline, connection: "ended", error: null });
    const answer = screen.getByTestId("answer");
    expect(answer.querySelector("strong")?.textContent).toBe("bold");
    expect(container.querySelector("script")).toBeNull();
    expect(answer.querySelector("a")?.getAttribute("href") ?? "").not.toContain("javascript");
    expect(screen.getByRole("button", { name: "Thumbs up" })).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Cancel run" })).toBeNull();
  });

  it("shows a failure with its action and a reconnecting badge", () => {
    const timeline = applyEvents(emptyTimeline("run1"), [ev("turn_failed", { code: "lm_unreachable", message: "no LM", action: "check DSPY_LM_API_BASE" })]);
    renderPanel({ timeline, connection: "reconnecting", error: null });
    expect(screen.getByRole("alert").textContent).toContain("check DSPY_LM_API_BASE");
    expect(screen.getByText("reconnecting…")).toBeTruthy();
  });
});
