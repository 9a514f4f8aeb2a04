// A clock that ticks only while something is live.
import { useEffect, useState } from "react";

export function useNow(live: boolean, everyMs = 500): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return;
    const id = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(id);
  }, [live, everyMs]);
  return now;
}
