// A truthful "this server does not offer it yet" state for features whose API has not landed.
export function Unavailable({ feature, endpoint }: { feature: string; endpoint: string }) {
  return (
    <div className="state" role="note" data-testid="unavailable">
      <strong>{feature}</strong> is not available on this server yet.
      <div className="muted">The server does not expose <code>{endpoint}</code>; upgrade fleet-rlm to use it.</div>
    </div>
  );
}
