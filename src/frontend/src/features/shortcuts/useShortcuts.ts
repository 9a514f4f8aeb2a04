// The app-wide keys: ? opens the shortcuts help, g then a letter goes to a page, / focuses the task box and t
// the current run's tree. Single keys never fire while a text field has the focus or with a modifier held.
import { useEffect, useRef } from "react";
import { useNavigate } from "react-router";
import { isTyping, NAV_KEYS } from "./shortcuts";

const THEN_MS = 1500; // how long "g" waits for its second key

function focusLast(selector: string): boolean {
  const all = document.querySelectorAll<HTMLElement>(selector);
  const el = all[all.length - 1];
  if (!el) return false;
  el.focus();
  el.scrollIntoView?.({ block: "nearest" });
  return true;
}

export function useShortcuts({ helpOpen, openHelp }: { helpOpen: boolean; openHelp: () => void }): void {
  const navigate = useNavigate();
  const pendingG = useRef(0);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (helpOpen || e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      if (document.querySelector("[role=dialog], [role=menu]")) return; // another overlay owns the keys
      const key = e.key;
      if (pendingG.current && Date.now() - pendingG.current < THEN_MS && NAV_KEYS[key]) {
        pendingG.current = 0;
        e.preventDefault();
        navigate(NAV_KEYS[key].path);
        return;
      }
      pendingG.current = 0;
      if (key === "?") {
        e.preventDefault();
        openHelp();
      } else if (key === "g") {
        pendingG.current = Date.now();
      } else if (key === "/") {
        if (focusLast("textarea#task")) e.preventDefault();
      } else if (key === "t") {
        if (focusLast('[role="tree"][aria-label="Run steps"]')) e.preventDefault();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [helpOpen, openHelp, navigate]);
}
