// Settings: health, connectivity tests, LLM profiles and role bindings, runtime settings, account.
import { Account } from "../features/settings/Account";
import { Health } from "../features/settings/Health";
import { ServerSettings } from "../features/settings/ServerSettings";

export function SettingsPage() {
  return (
    <div className="page stack">
      <h1 className="m-0 text-[20px]">Settings</h1>
      <Health />
      <ServerSettings />
      <Account />
    </div>
  );
}
