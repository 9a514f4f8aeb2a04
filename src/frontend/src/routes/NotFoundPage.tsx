// A path under /app that names no page: say so, instead of silently showing another page.
import { Link, useLocation } from "react-router";

export function NotFoundPage() {
  const { pathname } = useLocation();
  return (
    <div className="page">
      <div className="panel stack" role="alert" aria-labelledby="nf-title">
        <h1 id="nf-title" className="h1">Page not found</h1>
        <p>There is no page at <code>{pathname}</code>.</p>
        <p>
          Go to the <Link to="/app/workspace">Workspace</Link>, <Link to="/app/optimization">Optimization</Link>,{" "}
          <Link to="/app/volumes">Volumes</Link> or <Link to="/app/settings">Settings</Link>.
        </p>
      </div>
    </div>
  );
}
