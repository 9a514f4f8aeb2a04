// Profiles, roles, runtime settings, MCP servers and connectivity tests.
import { Connectivity } from "./Connectivity";
import { McpServers } from "./McpServers";
import { Profiles } from "./Profiles";
import { RuntimeSettings } from "./RuntimeSettings";

export function ServerSettings() {
  return (
    <>
      <Connectivity />
      <Profiles />
      <RuntimeSettings />
      <McpServers />
    </>
  );
}
