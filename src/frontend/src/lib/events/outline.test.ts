import { describe, expect, it } from "vitest";
import type { FleetEvent } from "../api/events.gen";
import fanout from "../../test/fixtures/fanout-run.json";
import golden from "../../test/fixtures/fanout-outline.json";
import { outline } from "./outline";
import { buildTree } from "./tree";

// The shared HTML export draws its tree in Python from the same events; tests/services/test_share_tree_parity.py
// compares it to this same golden outline, so the workbench and the share cannot drift apart.
describe("run tree outline", () => {
  it("matches the golden outline the share export is checked against", () => {
    expect(outline(buildTree(fanout as unknown as FleetEvent[]))).toEqual(golden);
  });
});
