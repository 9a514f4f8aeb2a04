// One timeline entry. Child RLMs render as nested lanes with their own items.
import { CodeBlock } from "../../components/CodeBlock";
import type { FleetEvent } from "../../lib/api/events.gen";
import type { ChildLane, TimelineItem } from "../../lib/events/types";
import { SubCallView, SubLmBatch } from "./SubLmBatch";

export function StepList({ items, lanes }: { items: TimelineItem[]; lanes: Record<string, ChildLane> }) {
  if (items.length === 0) return null;
  return (
    <ol className="timeline">
      {items.map((item) => (
        <li key={item.key}>
          <StepItem item={item} lanes={lanes} />
        </li>
      ))}
    </ol>
  );
}

function StepItem({ item, lanes }: { item: TimelineItem; lanes: Record<string, ChildLane> }) {
  switch (item.kind) {
    case "output":
      return (
        <>
          <span className={`step-label${item.stream === "stderr" ? " warn" : ""}`}>{item.stream}</span>
          <pre>{item.text}{item.omitted > 0 && `\n… ${item.omitted} characters omitted …`}</pre>
        </>
      );
    case "tool":
      return (
        <details>
          <summary>
            <span className="step-label">Tool</span> <code>{item.name}</code>{" "}
            {item.done ? (item.ok ? <span className="badge ok">ok</span> : <span className="badge err">error</span>) : <span className="badge">running</span>}
          </summary>
          <pre>{JSON.stringify(item.args, null, 2)}</pre>
          {item.done && <pre>{item.ok ? item.result : item.error}</pre>}
        </details>
      );
    case "sub_lm":
      return (
        <>
          <span className="step-label">Sub-LM</span>
          <SubCallView call={item.call} />
        </>
      );
    case "batch":
      return <SubLmBatch size={item.size} calls={item.calls} />;
    case "child":
      return <ChildLaneView lane={lanes[item.childId]} lanes={lanes} />;
    case "event":
      return <EventView event={item.event} />;
  }
}

function ChildLaneView({ lane, lanes }: { lane: ChildLane | undefined; lanes: Record<string, ChildLane> }) {
  if (!lane) return null;
  const badge = lane.status === "running" ? <span className="badge">running · iteration {lane.iteration}</span>
    : lane.status === "ok" ? <span className="badge ok">done</span> : <span className="badge err">failed</span>;
  return (
    <section className="lane" aria-label={`Child RLM at depth ${lane.depth}`}>
      <details open={lane.status === "running"}>
        <summary>
          <span className="step-label">Child RLM · depth {lane.depth}</span> {badge}
          <div className="muted">{lane.task}</div>
        </summary>
        <StepList items={lane.items} lanes={lanes} />
      </details>
      {lane.status !== "running" && <div>↳ {lane.status === "ok" ? lane.answer : lane.error}</div>}
    </section>
  );
}

function EventView({ event }: { event: FleetEvent }) {
  switch (event.type) {
    case "reasoning":
      return (<><span className="step-label">Reasoning</span><div style={{ whiteSpace: "pre-wrap" }}>{event.text}</div></>);
    case "code":
      return (<><span className="step-label">Code · iteration {event.iteration}</span><CodeBlock code={event.code} /></>);
    case "route_decision":
      return (<><span className="step-label">Route</span> <b>{event.mode}</b> <span className="muted">— {event.reason}</span></>);
    case "context_loaded":
      return (<><span className="step-label">Context</span> {event.name} <span className="muted">({event.chars.toLocaleString()} chars{event.variable ? ` as ${event.variable}` : ""}{event.truncated ? ", truncated" : ""})</span></>);
    case "status":
      return <span className="muted">{event.message}</span>;
    case "warning":
      return (<><span className="step-label warn">Warning</span> {event.message} <code className="muted">{event.code}</code></>);
    case "error":
      return (<><span className="step-label err">Error</span> {event.message} {event.action && <span className="muted">— {event.action}</span>}</>);
    case "budget_exhausted":
      return (<><span className="step-label warn">Budget</span> {event.budget} reached ({event.used} of {event.limit})</>);
    case "sandbox_reset":
      return (<><span className="step-label warn">Sandbox reset</span> {event.reason}</>);
    case "memory_updated":
      return (<><span className="step-label">Memory</span> {event.path} <span className="muted">(+{event.chars_appended} chars)</span></>);
    case "artifact_created":
      return (<><span className="step-label">Artifact</span> {event.name} <span className="muted">({event.size_bytes} bytes)</span></>);
    case "turn_failed":
      return (<><span className="step-label err">Failed</span> {event.message}</>);
    case "turn_cancelled":
      return (<><span className="step-label warn">Cancelled</span> {event.reason}</>);
    case "turn_interrupted":
      return (<><span className="step-label warn">Interrupted</span> {event.reason}</>);
    default:
      return <span className="step-label">{event.type}</span>;
  }
}
