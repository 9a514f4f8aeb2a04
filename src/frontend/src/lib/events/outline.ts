// A run tree reduced to its shape, [kind, title, children], for comparing trees across implementations: the
// share export (Python, src/fleet_rlm/services/share_nodes.py) draws the same outline from the same events,
// checked against one golden file (src/test/fixtures/fanout-outline.json) by both test suites.
import type { RunTree } from "./tree";

export type Outline = [string, string, Outline[]];

export function outline(tree: RunTree, id: string | null = tree.rootId): Outline[] {
  if (!id) return [];
  return tree.nodes[id].children.map((c) => [tree.nodes[c].kind, tree.nodes[c].title, outline(tree, c)]);
}
