// Shown instead of a blank page when rendering a route throws.
import { Link, useRouteError } from "react-router";

export function RouteError() {
  const error = useRouteError();
  return (
    <div className="page">
      <div className="panel state error" role="alert">
        <strong>Something went wrong in this page.</strong> {error instanceof Error ? error.message : String(error)}
        <div style={{ marginTop: 8 }}><Link to="/app/workspace">Back to the workspace</Link></div>
      </div>
    </div>
  );
}
