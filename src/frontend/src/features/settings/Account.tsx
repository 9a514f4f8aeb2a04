// The stored token: sign out (forget it) from this browser.
import { getToken, setToken } from "../../lib/auth";

export function Account() {
  if (!getToken()) return null;
  return (
    <section className="panel row" aria-label="Account">
      <span className="grow">A token is stored in this browser.</span>
      <button onClick={() => setToken(null)}>Sign out</button>
    </section>
  );
}
