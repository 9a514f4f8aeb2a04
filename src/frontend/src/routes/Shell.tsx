// The frame around every page: brand, navigation, theme, the keyboard shortcuts (and their help, ?), and the
// sign-in gate when auth is on.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useState } from "react";
import { NavLink, Outlet } from "react-router";
import { ErrorView, Loading } from "../components/States";
import { ThemeToggle } from "../components/ThemeToggle";
import { ShortcutsHelp } from "../features/shortcuts/ShortcutsHelp";
import { useShortcuts } from "../features/shortcuts/useShortcuts";
import { api, call } from "../lib/api/client";
import { isUnauthorized } from "../lib/api/errors";
import { onTokenChange } from "../lib/auth";
import { LoginPage } from "./LoginPage";

const LINKS = [
  ["/app/workspace", "Workspace"],
  ["/app/optimization", "Optimization"],
  ["/app/volumes", "Volumes"],
  ["/app/settings", "Settings"],
] as const;

export function useMe() {
  return useQuery({ queryKey: ["me"], queryFn: () => call(api.GET("/api/v1/auth/me")) });
}

export function Shell() {
  const client = useQueryClient();
  const me = useMe();
  const [help, setHelp] = useState(false);
  const openHelp = useCallback(() => setHelp(true), []);
  useShortcuts({ helpOpen: help, openHelp });
  useEffect(() => {
    const unsubscribe = onTokenChange(() => void client.resetQueries());
    return () => unsubscribe();
  }, [client]);

  let body;
  if (me.isPending) body = <Loading label="Connecting to the server…" />;
  else if (me.error && isUnauthorized(me.error)) body = <LoginPage />;
  else if (me.error) body = <ErrorView error={me.error} retry={() => void me.refetch()} />;
  else body = <Outlet />;

  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">
          <img src="/app/favicon.svg" width={22} height={22} alt="" /> fleet-rlm
        </span>
        <nav className="nav grow" aria-label="Main">
          {LINKS.map(([to, label]) => (
            <NavLink key={to} to={to} className={({ isActive }) => (isActive ? "active" : "")}>
              {label}
            </NavLink>
          ))}
        </nav>
        {me.data && <span className="muted" aria-label="Signed in as">{me.data.display_name ?? me.data.name}</span>}
        <button type="button" onClick={openHelp} aria-label="Keyboard shortcuts" aria-keyshortcuts="?" title="Keyboard shortcuts (?)">?</button>
        <ThemeToggle />
      </header>
      <ShortcutsHelp open={help} onOpenChange={setHelp} />
      <main className="main" id="main">
        {body}
      </main>
    </div>
  );
}
