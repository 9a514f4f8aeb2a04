import { describe, expect, it } from "vitest";
import { parseCsv, parseRecords } from "./csv";

describe("parseRecords", () => {
  it("reads quoted fields with delimiters, doubled quotes and newlines inside", () => {
    const text = 'name,note\r\n"Smith, J","said ""hi""\nthen left"\nplain,2\n';
    expect(parseRecords(text).records).toEqual([["name", "note"], ["Smith, J", 'said "hi"\nthen left'], ["plain", "2"]]);
  });
  it("keeps empty fields, a last row without newline, and strips a BOM", () => {
    expect(parseRecords("\ufeffa,,c\n1,2").records).toEqual([["a", "", "c"], ["1", "2"]]);
  });
  it("reports text that ends inside quotes as incomplete", () => {
    expect(parseRecords('a,b\n"open,1').complete).toBe(false);
  });
  it("reads tab-separated text", () => {
    expect(parseRecords("x\ty\n1\t2", "\t").records).toEqual([["x", "y"], ["1", "2"]]);
  });
});

describe("parseCsv", () => {
  it("uses the first row as header and pads short rows to its width", () => {
    expect(parseCsv("city,pop,area\nOslo,709000\n\nBergen,291000,465\n")).toEqual({
      header: ["city", "pop", "area"],
      rows: [["Oslo", "709000", ""], ["Bergen", "291000", "465"]],
      truncated: false,
    });
  });
  it("bounds the rows and says so", () => {
    const text = ["n", ...Array.from({ length: 50 }, (_, i) => String(i))].join("\n");
    const table = parseCsv(text, { maxRows: 10 });
    expect(table.rows).toHaveLength(10);
    expect(table.rows[9]).toEqual(["9"]);
    expect(table.truncated).toBe(true);
  });
  it("drops the partial last row of a text the server cut short", () => {
    const table = parseCsv("a,b\n1,2\n3,4", { cut: true });
    expect(table.rows).toEqual([["1", "2"]]);
    expect(table.truncated).toBe(true);
  });
  it("treats an empty text as an empty table", () => {
    expect(parseCsv("")).toEqual({ header: [], rows: [], truncated: false });
  });
});
