// The session header's actions: exports (Markdown, the self-contained HTML share file, JSON) and Fork session.
import * as Menu from "@radix-ui/react-dropdown-menu";
import { useState } from "react";
import { downloadExport, type ExportFormat } from "./exports";

const ITEMS: { format: ExportFormat; label: string; hint: string }[] = [
  { format: "html", label: "Share as HTML file", hint: "one self-contained page, opens offline, redacted" },
  { format: "markdown", label: "Export as Markdown", hint: "for an issue or a doc" },
  { format: "json", label: "Export JSON", hint: "the full bundle with every event" },
];

const itemClass =
  "flex cursor-pointer select-none flex-col rounded-md px-2.5 py-1.5 text-[13px] outline-none data-[highlighted]:bg-panel-2 data-[disabled]:cursor-not-allowed data-[disabled]:opacity-55";

export function SessionMenu({ sessionId, onFork, forking, onError }: {
  sessionId: string;
  onFork: () => void;
  forking: boolean;
  /** One line for the header when an action fails (null clears it). */
  onError: (message: string | null) => void;
}) {
  const [busy, setBusy] = useState<ExportFormat | null>(null);
  // the visible label starts the accessible name (WCAG 2.5.3), the rest says what the menu holds
  const label = busy ? "Exporting…" : forking ? "Forking…" : "Share";
  const run = async (format: ExportFormat) => {
    onError(null);
    setBusy(format);
    try {
      await downloadExport(sessionId, format);
    } catch (e) {
      onError(`Export failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      setBusy(null);
    }
  };
  return (
    <Menu.Root modal={false}>
      <Menu.Trigger asChild>
        <button type="button" aria-label={`${label}: export or fork this session`} data-testid="session-actions">
          {label}<span aria-hidden="true"> ▾</span>
        </button>
      </Menu.Trigger>
      <Menu.Portal>
        <Menu.Content align="end" sideOffset={4} collisionPadding={8}
          className="z-50 min-w-[15rem] max-w-[calc(100vw-16px)] rounded-lg border border-line bg-panel p-1 text-fg shadow-lg">
          {ITEMS.map((item) => (
            <Menu.Item key={item.format} className={itemClass} disabled={busy !== null} onSelect={() => void run(item.format)}>
              <span>{item.label}</span>
              <span className="muted text-[11.5px]">{item.hint}</span>
            </Menu.Item>
          ))}
          <Menu.Separator className="my-1 h-px bg-line" />
          <Menu.Item className={itemClass} disabled={forking} onSelect={onFork}>
            <span>Fork session</span>
            <span className="muted text-[11.5px]">a new session with every turn so far</span>
          </Menu.Item>
        </Menu.Content>
      </Menu.Portal>
    </Menu.Root>
  );
}
