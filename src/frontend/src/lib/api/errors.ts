// The server's error body is {"error": {code, message, action?}}; this turns any failure into one shape.
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly action?: string;
  /** Structured extras some errors carry, e.g. details.errors = [{line, message}] for an invalid dataset. */
  readonly details?: Record<string, unknown>;

  constructor(status: number, code: string, message: string, action?: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.action = action;
    this.details = details;
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string; action?: string; details?: Record<string, unknown> };
  detail?: unknown;
}

export function toApiError(status: number, body: unknown): ApiError {
  const err = (body as ErrorBody | undefined)?.error;
  if (err?.message) return new ApiError(status, err.code ?? "error", err.message, err.action, err.details);
  if (status === 404) return new ApiError(status, "not_found", "not found on this server");
  return new ApiError(status, "http_error", `request failed with HTTP ${status}`);
}

export function isUnauthorized(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401;
}

export function isMissingEndpoint(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 404 || error.status === 405);
}

/** The server said there is no such thing (404 not_found) — not a failure that trying again could fix. */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}
