// The workspace tree (memory/, artifacts/, buffers/, meta/) as an indented, keyboard-usable list.
import type { Schemas } from "../../lib/api/client";

type Entry = Schemas["VolumeEntry"];

export function VolumeTree({ entries, selected, onOpen }: { entries: Entry[]; selected: string | null; onOpen: (path: string) => void }) {
  const sorted = [...entries].sort((a, b) => a.path.localeCompare(b.path));
  return (
    <ul className="m-0 list-none p-0 font-mono text-[12.5px]" aria-label="Workspace files">
      {sorted.map((e) => (
        <li key={e.path} style={{ paddingLeft: e.depth * 14 }}>
          {e.type === "file" ? (
            <button aria-current={selected === e.path} onClick={() => onOpen(e.path)} title={`${e.path} (${e.size} bytes)`}
              className="!w-full !rounded !border-0 !bg-transparent !px-1 !py-0.5 text-left aria-[current=true]:!bg-panel-2 aria-[current=true]:font-semibold">
              {e.name}
            </button>
          ) : (
            <span className="muted block px-1 py-0.5">
              {e.name}{e.type === "dir" ? "/" : e.type === "symlink" ? " →" : ""}
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}
