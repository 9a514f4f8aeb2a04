// Shown when the server refuses us (auth_mode token/oidc): paste a token, kept in this browser only.
import { useState, type FormEvent } from "react";
import { getToken, setToken } from "../lib/auth";

export function LoginPage() {
  const [value, setValue] = useState("");
  const hadToken = !!getToken();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (value.trim()) setToken(value);
  };
  return (
    <form className="panel login stack" onSubmit={submit} aria-labelledby="login-title">
      <h1 id="login-title" style={{ margin: 0, fontSize: 20 }}>Sign in</h1>
      <p className="muted" style={{ margin: 0 }}>
        This server requires a token. Create one with <code>fleet-rlm auth token</code> (or use your identity
        provider's access token) and paste it here. It is stored in this browser's local storage.
      </p>
      {hadToken && <p role="alert" style={{ color: "var(--err)", margin: 0 }}>The stored token was refused; paste a new one.</p>}
      <div>
        <label htmlFor="token">Access token</label>
        <input id="token" type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} autoFocus />
      </div>
      <button className="primary" type="submit" disabled={!value.trim()}>Sign in</button>
    </form>
  );
}
