// Scripted fake-LM behaviour for the browser tests, as rules matched on text in the request (first match
// wins; the `--auto` rule answers everything else). The strings are what DSPy's ChatAdapter parses (see
// fleet_rlm.testing.fake_lm_dspy). Markers printed by a step's code show up in the next step's prompt, which
// is how a stateless rule knows a step already ran.

const fields = (f: Record<string, string>) =>
  [...Object.entries(f).map(([k, v]) => `[[ ## ${k} ## ]]\n${v}`), "[[ ## completed ## ]]"].join("\n\n");
const step = (reasoning: string, code: string) => fields({ reasoning, code: "```python\n" + code + "\n```" });
const submit = (reasoning: string, answer: string) => step(reasoning, `SUBMIT(answer=${JSON.stringify(answer)})`);
const rule = (contains: string, respond: unknown) => ({ contains, kind: "root", respond });

/** Task text that starts the depth-2 fan-out: three parallel children, one of which delegates once more. */
export const FAN_OUT_TASK = "Fan out the tree: split the work into parallel children";
export const FAN_OUT_ANSWER = "Fan-out done: alpha, beta and gamma (with delta) answered.";
/** Task text whose RLM steps never submit (each iteration prints and goes on) until a limit or Stop ends it. */
export const LOOP_TASK = "Keep looping until a limit stops you";
/** Task text whose root LM call fails with an HTTP 400 (a failed turn). */
export const FAIL_TASK = "Break on purpose: this model call fails";
/** Task text whose first cell makes variables (one a string of HTML) and whose second changes and deletes some. */
export const VARS_TASK = "Track the REPL variables across two cells";
export const HOSTILE_PREVIEW = '<img src=x onerror="document.title=1">';

/** Marker in an edited task (Edit and rerun): its run answers EDITED_ANSWER, so the rerun visibly used the edit. */
export const EDIT_MARKER = "EDIT-CUBES";
export const EDITED_ANSWER = "Cubes of the primes: 8, 27 and 125.";

/** Task text whose RLM step writes a CSV and a JSON artifact and a MEMORIES.md note (the side panel's content). */
export const PANEL_TASK = "Prepare the panel files: a city table and stats";
export const PANEL_ANSWER = "Saved cities.csv, stats.json and a memory note.";
export const PANEL_MEMORY = "- The panel city list has 2 entries";
const PANEL_CODE = [
  "import json",
  "with open(ARTIFACTS_DIR + '/cities.csv', 'w') as f:",
  "    f.write('city,population\\nOslo,709000\\n\"Bergen, Vestland\",291000\\n')",
  "with open(ARTIFACTS_DIR + '/stats.json', 'w') as f:",
  "    json.dump({'count': 2, 'cities': ['Oslo', 'Bergen']}, f)",
  "with open(MEMORY_DIR + '/MEMORIES.md', 'a') as f:",
  `    f.write('${PANEL_MEMORY}\\n')`,
  "print('M-PANEL-DONE')",
].join("\n");

/** Task text whose RLM step looks for the sales file in `context` and CONTEXT_DIR (a session's held context). */
export const HELD_TASK = "Read the held sales file and report north";
export const HELD_MARKER = "SALES-E2E-NORTH-1234";
export const HELD_SEEN = "North sold 1234 (from the session's sales file).";
export const HELD_NONE = "No sales file in this turn's context.";
const HELD_CODE = [
  "import os",
  "names = [n for n in os.listdir(CONTEXT_DIR) if os.path.isfile(os.path.join(CONTEXT_DIR, n))]",
  `in_dir = any('${HELD_MARKER}' in open(os.path.join(CONTEXT_DIR, n), errors='replace').read() for n in names)`,
  `print('M-HELD-' + ('SEEN' if in_dir and '${HELD_MARKER}' in context else 'NONE'))`,
].join("\n");

export const RULES = [
  rule("M-HELD-SEEN", submit("The file is there.", HELD_SEEN)),
  rule("M-HELD-NONE", submit("The file is gone.", HELD_NONE)),
  rule(HELD_TASK, step("Look for the sales file.", HELD_CODE)),
  rule("M-PANEL-DONE", submit("Files saved.", PANEL_ANSWER)),
  rule("Prepare the panel files", step("Write the two artifacts and a memory note.", PANEL_CODE)),
  rule(EDIT_MARKER, submit("Cube each prime.", EDITED_ANSWER)),
  rule("M-ROOT-DONE", submit("All children answered.", FAN_OUT_ANSWER)),
  rule("M-GAMMA-DONE", submit("Delta answered.", "gamma: delta says ok")),
  rule("M-LEAF-DONE", submit("Summaries in.", "leaf ok")),
  rule("M-VARS-TWO", submit("Both cells ran.", "Variables tracked.")),
  rule("M-VARS-ONE", step("Grow the list, drop the scratch value.", "notes.append('beta')\ncount = 2\ndel scratch\nprint('M-VARS-TWO', notes)")),
  rule("Track the REPL variables", step("Make some variables.", `notes = ['alpha']\ncount = 1\nscratch = 'temp'\nlabel = ${JSON.stringify(HOSTILE_PREVIEW)}\nprint('M-VARS-ONE', len(notes))`)),
  rule("Fan out the tree", step("Split into three sub-tasks.", "res = rlm_query_batched(['leaf alpha', 'leaf beta', 'branch gamma'])\nprint('M-ROOT-DONE', res)")),
  rule("branch gamma", step("Delegate one level deeper.", "d = rlm_query('leaf delta')\nprint('M-GAMMA-DONE', d)")),
  rule("leaf ", step("Ask two sub-LM questions at once.", "r = llm_query_batched(['summarize part one', 'summarize part two'])\nprint('M-LEAF-DONE', r)")),
  rule("Keep looping until a limit", step("Not done yet, keep going.", "import time\ntime.sleep(0.3)\nprint('tick')")),
  rule("Break on purpose", { status: 400, error: "The fake model refuses this request (scripted failure)." }),
];

export const SCRIPT = { rules: RULES, default: "A short sub-LM answer." };
