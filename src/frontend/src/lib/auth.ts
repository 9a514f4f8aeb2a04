// The bearer token a user pasted on the login page, kept in localStorage (auth_mode token/oidc).
const KEY = "fleet.token";
const listeners = new Set<() => void>();

export function getToken(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function setToken(token: string | null): void {
  if (token) localStorage.setItem(KEY, token.trim());
  else localStorage.removeItem(KEY);
  listeners.forEach((listener) => listener());
}

export function onTokenChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function authHeaders(): Record<string, string> {
  const token = getToken();
  return token ? { Authorization: `Bearer ${token}` } : {};
}
