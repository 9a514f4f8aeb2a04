import { describe, expect, it } from "vitest";
import { cellText, csvRecords, detectFormat, parseDataset, rowErrorsOf } from "./dataset";

const KEYS = ["task", "answer"];

describe("detectFormat", () => {
  it("follows the extension, else sniffs the first character", () => {
    expect(detectFormat("a.CSV", "{}")).toBe("csv");
    expect(detectFormat("a.ndjson", "x,y")).toBe("jsonl");
    expect(detectFormat("data.txt", '  {"task": 1}')).toBe("jsonl");
    expect(detectFormat("data.txt", "task,answer")).toBe("csv");
  });
});

describe("parseDataset (JSONL)", () => {
  it("reads rows and collects every column for the preview", () => {
    const text = '{"task": "2+2", "answer": "4"}\n\n{"task": "3*3", "answer": "9", "context": "math"}\n';
    const parsed = parseDataset(text, "sq.jsonl", KEYS);
    expect(parsed.format).toBe("jsonl");
    expect(parsed.rows).toHaveLength(2);
    expect(parsed.columns).toEqual(["task", "answer", "context"]);
    expect(parsed.errors).toEqual([]);
  });

  it("reports bad JSON and non-object lines by file line, before any key check", () => {
    const text = '{"task": "a", "answer": "b"}\n{oops\n[1, 2]\n{"task": "c"}\n';
    const parsed = parseDataset(text, "x.jsonl", KEYS);
    expect(parsed.errors.map((e) => e.line)).toEqual([2, 3]);
    expect(parsed.errors[0].message).toMatch(/^not valid JSON/);
    expect(parsed.errors[1].message).toBe("each line must be a JSON object");
  });

  it("reports missing and empty required keys by row number, as the server does", () => {
    const text = '{"task": "a", "answer": "b"}\n{"task": "c"}\n{"task": " ", "answer": "d"}\n';
    expect(parseDataset(text, "x.jsonl", KEYS).errors).toEqual([
      { line: 2, message: "missing key(s): answer" },
      { line: 3, message: "empty value for: task" },
    ]);
  });
});

describe("parseDataset (CSV)", () => {
  it("handles quoted cells with commas, quotes and newlines", () => {
    const text = 'task,answer\n"say ""hi"", then stop","hi,\nthere"\r\nplain,x\n';
    const parsed = parseDataset(text, "d.csv", KEYS);
    expect(parsed.errors).toEqual([]);
    expect(parsed.rows).toEqual([
      { task: 'say "hi", then stop', answer: "hi,\nthere" },
      { task: "plain", answer: "x" },
    ]);
  });

  it("numbers rows after the header and flags extra cells and blank required values", () => {
    const parsed = parseDataset("task,answer\na,b,c\nd,e\n", "d.csv", KEYS);
    expect(parsed.errors).toEqual([{ line: 2, message: "more cells than header columns" }]);
    expect(parseDataset("task,answer\na,\n", "d.csv", KEYS).errors).toEqual([{ line: 1, message: "empty value for: answer" }]);
  });

  it("splits records and drops blank lines", () => {
    expect(csvRecords("a,b\n\n1,2")).toEqual([["a", "b"], ["1", "2"]]);
  });
});

describe("helpers", () => {
  it("shortens cells to one line", () => {
    expect(cellText("a\n  b")).toBe("a b");
    expect(cellText({ x: 1 })).toBe('{"x":1}');
    expect(cellText("x".repeat(100), 10)).toBe(`${"x".repeat(9)}…`);
    expect(cellText(null)).toBe("");
  });

  it("reads the server's 422 row errors", () => {
    expect(rowErrorsOf({ errors: [{ line: 4, message: "missing key(s): answer" }], total_errors: 1 })).toEqual([{ line: 4, message: "missing key(s): answer" }]);
    expect(rowErrorsOf(undefined)).toEqual([]);
    expect(rowErrorsOf({ errors: "nope" })).toEqual([]);
  });
});
