// What one tree node did, in full: the cell's code and output, a tool call's arguments and result, a sub-LM
// call's prompt and response, a child's task and answer, the REPL variables after a cell, errors, timing,
// tokens, and the raw events.
import type { ReactNode } from "react";
import { CodeBlock } from "../../../components/Lazy";
import type { FleetEvent } from "../../../lib/api/events.gen";
import type { RunTree, TreeNode } from "../../../lib/events/tree";
import { cost, duration, tokens } from "../format";
import { STATUS_TEXT } from "./RunTree";
import { Variables } from "./Variables";

const BADGE: Record<TreeNode["status"], string> = { running: "", ok: "ok", failed: "err", warn: "warn", cancelled: "warn" };

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="mt-2">
      <div className="text-[11px] font-semibold uppercase tracking-wide text-muted">{label}</div>
      {children}
    </div>
  );
}

const Text = ({ text }: { text: string }) => <pre className="max-h-80">{text || "(empty)"}</pre>;

function of<T extends FleetEvent["type"]>(events: FleetEvent[], type: T): Extract<FleetEvent, { type: T }>[] {
  return events.filter((e) => e.type === type) as Extract<FleetEvent, { type: T }>[];
}

function Body({ node, tree }: { node: TreeNode; tree: RunTree }) {
  const ev = node.events;
  switch (node.kind) {
    case "run": {
      const started = of(ev, "turn_started")[0];
      const final = of(ev, "final")[0];
      const failed = of(ev, "turn_failed")[0];
      return (
        <>
          {started && <Field label="Task"><Text text={started.input_preview} /></Field>}
          {final && <Field label="Answer"><Text text={final.answer} /></Field>}
          {failed && <Field label={`Error (${failed.code})`}><Text text={`${failed.message}${failed.action ? `\nWhat to do: ${failed.action}` : ""}`} /></Field>}
        </>
      );
    }
    case "iteration": {
      const cell = node.children.map((c) => tree.nodes[c]).find((c) => c.kind === "code");
      return (
        <>
          {of(ev, "reasoning").map((r) => <Field key={r.seq} label="Reasoning"><div className="whitespace-pre-wrap">{r.text}</div></Field>)}
          {cell && <Cell node={cell} />}
        </>
      );
    }
    case "code":
      return <Cell node={node} />;
    case "tool": {
      const call = of(ev, "tool_call")[0];
      const result = of(ev, "tool_result")[0];
      return (
        <>
          {call && <Field label="Arguments"><Text text={JSON.stringify(call.args, null, 2)} /></Field>}
          {result && (result.ok ? <Field label="Result"><Text text={result.result_preview} /></Field> : <Field label="Error"><Text text={result.error ?? "failed"} /></Field>)}
        </>
      );
    }
    case "sub_lm": {
      const start = of(ev, "sub_lm_start")[0];
      const end = of(ev, "sub_lm_end")[0];
      return (
        <>
          {start && <p className="muted">{start.model} · role {start.role}{start.batch_id ? ` · prompt ${(start.batch_index ?? 0) + 1} of ${start.batch_size}` : ""}</p>}
          {start && <Field label="Prompt"><Text text={start.prompt_preview} /></Field>}
          {end && (end.ok ? <Field label="Response"><Text text={end.response_preview} /></Field> : <Field label="Error"><Text text={end.error ?? "failed"} /></Field>)}
          {end && <p className="muted">{end.tokens_in + end.tokens_out ? `${tokens(end.tokens_in)} in · ${tokens(end.tokens_out)} out tokens` : "tokens not reported"} · {duration(end.latency_ms)}</p>}
        </>
      );
    }
    case "lm": {
      const call = of(ev, "lm_call")[0];
      if (!call) return null;
      return (
        <>
          <p className="muted">{call.model} · role {call.role}{call.cached ? " · answered from the cache" : ""}{call.iteration ? ` · generates iteration ${call.iteration}` : ""}</p>
          <Field label="Prompt (newest message)"><Text text={call.prompt_preview} /></Field>
          {call.ok ? <Field label="Response"><Text text={call.response_preview} /></Field> : <Field label="Error"><Text text={call.error ?? "failed"} /></Field>}
        </>
      );
    }
    case "batch":
      return (
        <ol className="pl-5">
          {node.children.map((c) => {
            const call = tree.nodes[c];
            const start = of(call.events, "sub_lm_start")[0];
            const end = of(call.events, "sub_lm_end")[0];
            return (
              <li key={c} className="mt-2">
                <div className="muted">→ {start?.prompt_preview}</div>
                <div>{end ? (end.ok ? `← ${end.response_preview}` : `✕ ${end.error}`) : "running…"}</div>
              </li>
            );
          })}
        </ol>
      );
    case "child": {
      const start = of(ev, "child_start")[0];
      const end = of(ev, "child_end")[0];
      return (
        <>
          {start && <Field label="Task"><Text text={start.task_preview} /></Field>}
          {end && (end.ok ? <Field label="Answer"><Text text={end.answer_preview} /></Field> : <Field label="Error"><Text text={end.error ?? "failed"} /></Field>)}
          <p className="muted">{node.children.filter((c) => tree.nodes[c].kind === "iteration").length} iterations</p>
        </>
      );
    }
    default:
      return <Field label={ev[0]?.type ?? "event"}><Text text={node.subtitle} /></Field>;
  }
}

function Cell({ node }: { node: TreeNode }) {
  const code = of(node.events, "code")[0];
  const outputs = of(node.events, "output");
  const stdout = outputs.filter((o) => o.stream === "stdout").map((o) => o.text).join("");
  const stderr = outputs.filter((o) => o.stream === "stderr").map((o) => o.text).join("");
  const omitted = outputs.reduce((n, o) => n + o.omitted_chars, 0);
  return (
    <>
      {code && <Field label="Code"><CodeBlock code={code.code} /></Field>}
      <Field label="Output">{stdout || !stderr ? <Text text={stdout} /> : null}</Field>
      {stderr && <Field label="stderr"><pre className="max-h-80 text-err">{stderr}</pre></Field>}
      {omitted > 0 && <p className="muted">{omitted.toLocaleString()} characters omitted from the middle of the output.</p>}
      <Variables key={node.id} cell={node} />
    </>
  );
}

export function NodeDetail({ tree, id, onClose, link }: { tree: RunTree; id: string; onClose: () => void; link: string }) {
  const node = tree.nodes[id];
  if (!node) return null;
  const end = node.end ?? tree.tLast;
  return (
    <aside className="min-w-0 rounded-lg border border-line bg-panel p-3" aria-label="Step detail" data-testid="node-detail">
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="m-0 text-[15px] font-semibold">{node.title}</h2>
        <span className={`badge ${BADGE[node.status]}`}>{STATUS_TEXT[node.status]}</span>
        <span className="grow" />
        <button type="button" onClick={() => void navigator.clipboard?.writeText(new URL(link, window.location.href).toString())}>Copy link</button>
        <button type="button" onClick={onClose} aria-label="Close detail">✕</button>
      </div>
      <p className="muted m-0 mt-1 text-[12px] tabular-nums">
        starts +{duration(node.start - tree.t0)} · {node.end === null ? "running for" : "took"} {duration(end - node.start)}
        {node.tokensIn + node.tokensOut > 0 && ` · ${tokens(node.tokensIn)} in / ${tokens(node.tokensOut)} out tokens`}
        {node.costUsd !== null && ` · ${cost(node.costUsd)}`} · depth {node.agentDepth} · seq {node.seq}
      </p>
      <Body node={node} tree={tree} />
      <details className="mt-2">
        <summary className="text-[12px] text-muted">Raw events ({node.events.length})</summary>
        <pre className="max-h-80">{JSON.stringify(node.events, null, 2)}</pre>
      </details>
    </aside>
  );
}
