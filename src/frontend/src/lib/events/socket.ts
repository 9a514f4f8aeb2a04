// WebSocket plumbing: ticketed URLs, starting a turn on /ws/execution, following a run on
// /ws/execution/events with automatic resume from the last seen seq (replay then live: no gaps, no doubles).
import type { FleetEvent } from "../api/events.gen";
import { isTerminal } from "./timeline";

export type SocketFactory = (url: string) => WebSocket;
export type TicketSource = () => Promise<string | null>;

export interface TurnFrame {
  session_id: string;
  content: string;
  execution_mode?: "auto" | "direct" | "tools" | "rlm" | null;
  attachment_ids?: string[];
  context_text?: string | null;
  urls?: string[];
  repo_url?: string | null;
  repo_ref?: string | null;
  context_paths?: string[];
  batch_concurrency?: number | null;
  skills?: string[];
  idempotency_key: string;
}

export class SocketError extends Error {
  constructor(readonly code: string, message: string, readonly action?: string) {
    super(message);
    this.name = "SocketError";
  }
}

export function wsUrl(path: string, params: Record<string, string | number | null | undefined>, origin = window.location.href): string {
  const url = new URL(path, origin);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  for (const [key, value] of Object.entries(params)) if (value !== null && value !== undefined) url.searchParams.set(key, String(value));
  return url.toString();
}

const defaultFactory: SocketFactory = (url) => new WebSocket(url);

/** Sends one `message` frame and resolves with the run id from the `ack` (the socket is then closed). */
export async function startTurn(frame: TurnFrame, ticket: TicketSource, factory: SocketFactory = defaultFactory): Promise<string> {
  const socket = factory(wsUrl("/api/v1/ws/execution", { ticket: await ticket() }));
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const finish = (run: string | null, error?: SocketError) => {
      if (settled) return;
      settled = true;
      socket.close();
      if (run) resolve(run);
      else reject(error);
    };
    socket.onopen = () => socket.send(JSON.stringify({ type: "message", ...frame }));
    socket.onmessage = (message) => {
      const data = JSON.parse(String(message.data));
      if (data.type === "ack") finish(String(data.run_id));
      else if (data.type === "error") finish(null, new SocketError(data.code, data.message, data.action));
    };
    socket.onerror = () => finish(null, new SocketError("network_error", "the execution socket failed", "check that fleet web is running"));
    socket.onclose = () => finish(null, new SocketError("closed", "the server closed the socket before accepting the turn"));
  });
}

export type FollowState = "connecting" | "live" | "reconnecting" | "ended" | "failed";

export interface FollowOptions {
  runId: string;
  after?: number;
  onEvent: (event: FleetEvent) => void;
  onState?: (state: FollowState, error?: SocketError) => void;
  ticket: TicketSource;
  factory?: SocketFactory;
  /** Delay before reconnect attempt n (0-based); default backs off from 250 ms to 5 s. */
  backoff?: (attempt: number) => number;
  maxAttempts?: number;
}

export interface Follower {
  close(): void;
  lastSeq(): number;
}

/** Follows a run until its `end` frame, reconnecting after drops from the last seq it delivered. */
export function followRun(options: FollowOptions): Follower {
  const factory = options.factory ?? defaultFactory;
  const backoff = options.backoff ?? ((n: number) => Math.min(5000, 250 * 2 ** n));
  const maxAttempts = options.maxAttempts ?? 30;
  let lastSeq = options.after ?? 0;
  let attempts = 0;
  let closed = false;
  let socket: WebSocket | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const setState = (state: FollowState, error?: SocketError) => options.onState?.(state, error);

  const connect = async () => {
    if (closed) return;
    setState(attempts === 0 ? "connecting" : "reconnecting");
    let ticket: string | null;
    try {
      ticket = await options.ticket();
    } catch (error) {
      return retry(error instanceof SocketError ? error : new SocketError("ticket_failed", String(error)));
    }
    if (closed) return;
    let done = false;
    const current = factory(wsUrl("/api/v1/ws/execution/events", { run_id: options.runId, after: lastSeq, ticket }));
    socket = current;
    current.onopen = () => {
      attempts = 0;
      setState("live");
    };
    current.onmessage = (message) => {
      const frame = JSON.parse(String(message.data));
      if (frame.type === "event") {
        const event = frame.data as FleetEvent;
        if (event.seq > lastSeq) {
          lastSeq = event.seq;
          options.onEvent(event);
        }
        if (isTerminal(event)) done = true;
      } else if (frame.type === "end") {
        done = true;
        closed = true;
        current.close();
        setState("ended");
      } else if (frame.type === "error") {
        done = true;
        closed = true;
        setState("failed", new SocketError(frame.code, frame.message, frame.action));
      }
    };
    current.onclose = () => {
      if (socket === current) socket = null;
      if (closed) return;
      if (done) {
        closed = true;
        setState("ended");
        return;
      }
      retry(new SocketError("disconnected", "lost the connection to the run"));
    };
  };

  const retry = (error: SocketError) => {
    if (closed) return;
    if (attempts >= maxAttempts) {
      closed = true;
      setState("failed", error);
      return;
    }
    setState("reconnecting", error);
    timer = setTimeout(connect, backoff(attempts++));
  };

  void connect();
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      socket?.close();
    },
    lastSeq: () => lastSeq,
  };
}
