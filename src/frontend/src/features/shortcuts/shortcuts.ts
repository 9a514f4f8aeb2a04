// Every keyboard shortcut of the app, in one list: the help overlay shows this list, and the global handler
// (useShortcuts) and the components that own the others (run tree, composer, run bar, title editor) implement
// the same keys. The e2e test tries one from each group.

export interface Shortcut {
  keys: string[][]; // alternatives, each a chord of keys pressed together (or one after the other for "then")
  what: string;
  then?: boolean; // keys of a chord are pressed one after the other
}

export interface ShortcutGroup {
  title: string;
  /** When it works, if not everywhere a single key works (the focus outside a text field). */
  where: string;
  items: Shortcut[];
}

export const NAV_KEYS: Record<string, { path: string; label: string }> = {
  w: { path: "/app/workspace", label: "Workspace" },
  o: { path: "/app/optimization", label: "Optimization" },
  v: { path: "/app/volumes", label: "Volumes" },
  s: { path: "/app/settings", label: "Settings" },
};

export const SHORTCUTS: ShortcutGroup[] = [
  {
    title: "Anywhere",
    where: "",
    items: [
      { keys: [["?"]], what: "Show this list of shortcuts" },
      ...Object.entries(NAV_KEYS).map(([key, { label }]) => ({ keys: [["g", key]], then: true, what: `Go to ${label}` })),
      { keys: [["Esc"]], what: "Close a dialog or menu" },
    ],
  },
  {
    title: "Workspace",
    where: "",
    items: [
      { keys: [["/"]], what: "Focus the task box" },
      { keys: [["t"]], what: "Focus the run tree of the current run" },
      { keys: [["Esc"]], what: "Stop the active run (the run bar's Stop button)" },
    ],
  },
  {
    title: "Task box",
    where: "while typing a task",
    items: [{ keys: [["Ctrl", "Enter"], ["⌘", "Enter"]], what: "Run the task" }],
  },
  {
    title: "Run tree",
    where: "when the tree has the focus",
    items: [
      { keys: [["↓"], ["↑"]], what: "Next / previous step (opens its detail)" },
      { keys: [["→"]], what: "Expand the step" },
      { keys: [["←"]], what: "Collapse the step, or go to its parent" },
      { keys: [["Home"], ["End"]], what: "First / last step" },
    ],
  },
  {
    title: "Session title",
    where: "while renaming a session",
    items: [
      { keys: [["Enter"]], what: "Save the title" },
      { keys: [["Esc"]], what: "Cancel" },
    ],
  },
];

/** True when a key press is text entry (a field has the focus), which a single-key shortcut must not take. */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || typeof el.closest !== "function") return false;
  return !!el.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']");
}
