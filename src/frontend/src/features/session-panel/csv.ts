// A small RFC 4180 reader for the artifact preview: quoted fields, doubled quotes, CRLF and newlines inside
// quotes; bounded, so a huge file never builds a huge table.

export interface CsvTable {
  header: string[];
  rows: string[][];
  /** True when rows were left out (more than `maxRows`, or the text was cut mid-row). */
  truncated: boolean;
}

/** Splits CSV (or TSV with `delimiter: "\t"`) text into records; `complete` is false if it ends inside quotes. */
export function parseRecords(text: string, delimiter = ",", maxRecords = Infinity): { records: string[][]; complete: boolean } {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  while (i < body.length) {
    const c = body[i];
    if (quoted) {
      if (c === '"') {
        if (body[i + 1] === '"') (field += '"'), (i += 2);
        else (quoted = false), i++;
      } else (field += c), i++;
      continue;
    }
    if (c === '"' && field === "") (quoted = true), i++;
    else if (c === delimiter) record.push(field), (field = ""), i++;
    else if (c === "\n" || c === "\r") {
      record.push(field);
      records.push(record);
      if (records.length >= maxRecords) return { records, complete: true };
      (record = []), (field = "");
      i += c === "\r" && body[i + 1] === "\n" ? 2 : 1;
    } else (field += c), i++;
  }
  if (quoted) return { records, complete: false };
  if (field !== "" || record.length > 0) record.push(field), records.push(record);
  return { records, complete: true };
}

/** The first row as the header, then up to `maxRows` rows padded to the header's width. */
export function parseCsv(text: string, { delimiter = ",", maxRows = 200, cut = false } = {}): CsvTable {
  const { records, complete } = parseRecords(text, delimiter, maxRows + 2);
  // a text cut by the server's size limit ends mid-row: that row is not shown as if it were whole
  if (cut && complete && records.length > 1 && !/[\r\n]$/.test(text)) records.pop();
  const [header = [], ...rest] = records.filter((r) => !(r.length === 1 && r[0] === ""));
  const width = Math.max(header.length, ...rest.map((r) => r.length));
  const pad = (r: string[]) => (r.length < width ? [...r, ...Array<string>(width - r.length).fill("")] : r);
  const rows = rest.slice(0, maxRows).map(pad);
  return { header: pad(header), rows, truncated: rest.length > maxRows || !complete || cut };
}
