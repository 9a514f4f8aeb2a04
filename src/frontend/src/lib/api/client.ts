// The typed API client, generated types from openapi.yaml; every call carries the stored bearer token.
import createClient, { type Middleware } from "openapi-fetch";
import { authHeaders } from "../auth";
import { ApiError, toApiError } from "./errors";
import type { components, paths } from "./schema.gen";

export type Schemas = components["schemas"];

const withAuth: Middleware = {
  onRequest({ request }) {
    for (const [name, value] of Object.entries(authHeaders())) request.headers.set(name, value);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: "" });
api.use(withAuth);

/** Unwraps an openapi-fetch result: the data, or a thrown ApiError with the server's code and action. */
export async function call<T>(
  pending: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await pending;
  } catch (cause) {
    throw new ApiError(0, "network_error", `cannot reach the server (${String(cause)})`, "check that fleet web is running");
  }
  if (!result.response.ok) throw toApiError(result.response.status, result.error);
  return result.data as T;
}

/** Plain fetch with the token, for multipart uploads, downloads and endpoints newer than openapi.yaml. */
export async function rawFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(authHeaders())) headers.set(name, value);
  let response: Response;
  try {
    response = await fetch(url, { ...init, headers });
  } catch (cause) {
    throw new ApiError(0, "network_error", `cannot reach the server (${String(cause)})`, "check that fleet web is running");
  }
  if (!response.ok) {
    const body = await response.json().catch(() => undefined);
    throw toApiError(response.status, body);
  }
  return response;
}

/** Downloads a protected URL as a file (links cannot carry the Authorization header). */
export async function download(url: string, filename: string): Promise<void> {
  const blob = await (await rawFetch(url)).blob();
  saveBlob(blob, filename);
}

export function saveBlob(blob: Blob, filename: string): void {
  const href = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = href;
  link.download = filename;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(href), 1000);
}
