// A wide table scrolls sideways inside its own box (never the page), and the box takes the focus so a keyboard
// user can scroll it too.
import type { ReactNode } from "react";

export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="relative min-w-0 overflow-x-auto" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
