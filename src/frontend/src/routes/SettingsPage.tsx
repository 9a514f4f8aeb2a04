// Settings: health, connectivity tests, LLM profiles and role bindings, runtime settings, account.
import { Account } from "../features/settings/Account";
import { Health } from "../features/settings/Health";
import { ServerSettings } from "../features/settings/ServerSettings";

export function SettingsPage() {
  return (
    <div className="page stack">
      <h1 style={{ fontSize: 20, margin: 0 }}>Settings</h1>
      <Health />
      <ServerSettings />
      <Account />
    </div>
  );
}
