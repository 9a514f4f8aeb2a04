// WebSocket tickets: browsers cannot set headers on sockets, so the token buys a short single-use ticket.
import { api, call } from "../api/client";
import { isUnauthorized } from "../api/errors";
import { SocketError } from "./socket";

export async function fetchTicket(): Promise<string | null> {
  try {
    const out = await call(api.POST("/api/v1/auth/ws-ticket"));
    return out.ticket;
  } catch (error) {
    if (isUnauthorized(error)) throw new SocketError("unauthorized", "sign in again: the token was refused", "paste a valid token");
    throw error;
  }
}
