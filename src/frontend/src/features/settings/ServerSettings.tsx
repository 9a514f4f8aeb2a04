// Profiles, roles, runtime settings and connectivity tests.
import { Connectivity } from "./Connectivity";
import { Profiles } from "./Profiles";
import { RuntimeSettings } from "./RuntimeSettings";

export function ServerSettings() {
  return (
    <>
      <Connectivity />
      <Profiles />
      <RuntimeSettings />
    </>
  );
}
