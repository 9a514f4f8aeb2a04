// Modal dialogs on Radix (focus trapped, then given back to where it was; Esc and a click outside close it;
// labelled for screen readers): one frame for every dialog, and a confirmation for destructive actions.
// The backdrop is a plain element, not Radix's Overlay: that one locks scrolling by injecting a <style> tag,
// which the app's Content-Security-Policy (no inline styles) refuses.
import * as Radix from "@radix-ui/react-dialog";
import { useRef, useState, type ReactNode } from "react";

export function Dialog({ open, onOpenChange, title, description, children, wide = false }: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: ReactNode;
  children: ReactNode;
  wide?: boolean;
}) {
  const opener = useRef<HTMLElement | null>(null);
  return (
    <Radix.Root open={open} onOpenChange={onOpenChange}>
      <Radix.Portal>
        <div className="fixed inset-0 z-40 bg-black/40" aria-hidden="true" />
        <Radix.Content
          onOpenAutoFocus={() => { opener.current = document.activeElement as HTMLElement | null; }}
          onCloseAutoFocus={(e) => { e.preventDefault(); opener.current?.focus?.(); }}
          className={`fixed left-1/2 top-1/2 z-50 max-h-[calc(100dvh-2rem)] w-[calc(100vw-1.5rem)] -translate-x-1/2 -translate-y-1/2 overflow-auto rounded-lg border border-line bg-panel p-4 text-fg shadow-xl ${wide ? "max-w-2xl" : "max-w-md"}`}
          {...(description ? {} : { "aria-describedby": undefined })}>
          <div className="flex items-start gap-2">
            <Radix.Title className="m-0 grow text-[16px] font-semibold">{title}</Radix.Title>
            <Radix.Close asChild>
              <button type="button" aria-label="Close" className="!px-2 !py-0.5">✕</button>
            </Radix.Close>
          </div>
          {description && <Radix.Description className="muted mt-1 mb-0 text-[13px]">{description}</Radix.Description>}
          <div className="mt-3">{children}</div>
        </Radix.Content>
      </Radix.Portal>
    </Radix.Root>
  );
}

/** A button that asks before it acts: the dialog names what will happen; Cancel has the focus first. */
export function ConfirmButton({ children, title, description, confirm, onConfirm, className = "danger", disabled, label }: {
  children: ReactNode;
  title: string;
  description: ReactNode;
  /** The confirming button's text, e.g. "Delete". */
  confirm: string;
  onConfirm: () => void;
  className?: string;
  disabled?: boolean;
  /** aria-label of the opening button. */
  label?: string;
}) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={className} disabled={disabled} aria-label={label} onClick={() => setOpen(true)}>{children}</button>
      <Dialog open={open} onOpenChange={setOpen} title={title} description={description}>
        <div className="flex justify-end gap-2">
          <Radix.Close asChild><button type="button" autoFocus>Cancel</button></Radix.Close>
          <button type="button" className="danger font-semibold" onClick={() => { setOpen(false); onConfirm(); }}>{confirm}</button>
        </div>
      </Dialog>
    </>
  );
}
