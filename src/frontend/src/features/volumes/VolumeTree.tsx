// The workspace tree (memory/, artifacts/, buffers/, meta/) as an indented, keyboard-usable list.
import type { Schemas } from "../../lib/api/client";

type Entry = Schemas["VolumeEntry"];

export function VolumeTree({ entries, selected, onOpen }: { entries: Entry[]; selected: string | null; onOpen: (path: string) => void }) {
  const sorted = [...entries].sort((a, b) => a.path.localeCompare(b.path));
  return (
    <ul className="tree" aria-label="Workspace files">
      {sorted.map((e) => (
        <li key={e.path} style={{ paddingLeft: e.depth * 14 }}>
          {e.type === "file" ? (
            <button aria-current={selected === e.path} onClick={() => onOpen(e.path)} title={`${e.path} (${e.size} bytes)`}>
              {e.name}
            </button>
          ) : (
            <span className="muted" style={{ display: "block", padding: "2px 4px" }}>
              {e.name}{e.type === "dir" ? "/" : e.type === "symlink" ? " →" : ""}
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}
