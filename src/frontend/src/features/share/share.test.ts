import { beforeEach, describe, expect, it } from "vitest";
import { rememberMode } from "../composer/mode";
import { dispositionFilename } from "./exports";
import { forkPointForEdit, forkPointForTurn, rerunMode } from "./forks";

describe("fork points", () => {
  it("edits turn N by forking after N-1 turns; forks 'from here' keep turns 1..N", () => {
    expect(forkPointForEdit({ index: 0 })).toBe(0);
    expect(forkPointForEdit({ index: 1 })).toBe(1);
    expect(forkPointForTurn({ index: 0 })).toBe(1);
    expect(forkPointForTurn({ index: 2 })).toBe(3);
  });
});

describe("rerun mode", () => {
  beforeEach(() => localStorage.clear());
  it("reuses the edited run's mode, else the session's saved choice", () => {
    rememberMode("s1", "tools");
    expect(rerunMode("rlm", "s1")).toBe("rlm");
    expect(rerunMode("fork", "s1")).toBe("tools");
    expect(rerunMode(null, "s1")).toBe("tools");
    expect(rerunMode(undefined, "s2")).toBe("auto");
  });
});

describe("Content-Disposition filename", () => {
  it("reads quoted, bare and RFC 5987 names", () => {
    expect(dispositionFilename('attachment; filename="fleet-session-ab12.html"')).toBe("fleet-session-ab12.html");
    expect(dispositionFilename("attachment; filename=notes.md")).toBe("notes.md");
    expect(dispositionFilename("attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.md; filename=\"x.md\"")).toBe("résumé.md");
  });
  it("drops directory parts and refuses empty or dot names", () => {
    expect(dispositionFilename('attachment; filename="../../etc/passwd"')).toBe("passwd");
    expect(dispositionFilename('attachment; filename=".."')).toBeNull();
    expect(dispositionFilename("attachment")).toBeNull();
    expect(dispositionFilename(null)).toBeNull();
  });
  it("falls back to the plain name when the extended one is malformed", () => {
    expect(dispositionFilename("attachment; filename*=UTF-8''%E0%A4%A; filename=\"plain.json\"")).toBe("plain.json");
  });
});
