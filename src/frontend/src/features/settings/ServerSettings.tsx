// Profiles, roles, runtime settings and connectivity tests, once this server's API offers them.
import { Unavailable } from "../../components/Unavailable";

export function ServerSettings() {
  return (
    <section className="panel stack" aria-labelledby="lm-title">
      <h2 id="lm-title" style={{ fontSize: 16, margin: 0 }}>Models and runtime</h2>
      <Unavailable feature="LLM profiles, role bindings and runtime settings" endpoint="/api/v1/llm-profiles" />
    </section>
  );
}
