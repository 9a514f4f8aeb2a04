// The keyboard shortcuts overlay (press ?): every shortcut the app has, by where it works.
import { Fragment } from "react";
import { Dialog } from "../../components/Dialog";
import { SHORTCUTS, type Shortcut } from "./shortcuts";

const Key = ({ k }: { k: string }) => (
  <kbd className="inline-block min-w-[1.6em] rounded border border-line border-b-2 bg-panel-2 px-1.5 text-center font-mono text-[12px] leading-5">{k}</kbd>
);

function Keys({ item }: { item: Shortcut }) {
  return (
    <span className="inline-flex flex-wrap items-center gap-1">
      {item.keys.map((chord, i) => (
        <Fragment key={i}>
          {i > 0 && <span className="muted text-[12px]">or</span>}
          {chord.map((k, j) => (
            <Fragment key={j}>
              {j > 0 && <span className="muted text-[12px]">{item.then ? "then" : "+"}</span>}
              <Key k={k} />
            </Fragment>
          ))}
        </Fragment>
      ))}
    </span>
  );
}

export function ShortcutsHelp({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title="Keyboard shortcuts" wide
      description="Single keys work when the focus is not in a text field. Press ? to open this list, Esc to close it.">
      <div className="grid gap-4 sm:grid-cols-2">
        {SHORTCUTS.map((group) => (
          <section key={group.title} aria-labelledby={`keys-${group.title}`}>
            <h3 id={`keys-${group.title}`} className="m-0 text-[13px] font-semibold">{group.title}{group.where && <span className="muted font-normal"> · {group.where}</span>}</h3>
            <dl className="m-0 mt-1">
              {group.items.map((item) => (
                <div key={item.what} className="flex items-baseline justify-between gap-3 border-b border-line py-1 last:border-b-0">
                  <dt className="text-[13px]">{item.what}</dt>
                  <dd className="m-0 shrink-0"><Keys item={item} /></dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
      </div>
    </Dialog>
  );
}
