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
    <div className="grid h-full grid-cols-[minmax(0,1fr)] grid-rows-[auto_minmax(0,1fr)]">
      <header className="flex flex-wrap items-center gap-2 border-b border-line bg-panel px-2.5 py-1.5 md:gap-4 md:px-4 md:py-2">
        <span className="flex items-center gap-2 font-bold tracking-[.2px]">
          <img src="/app/favicon.svg" width={22} height={22} alt="" /> fleet-rlm
        </span>
        <nav className="order-3 flex min-w-0 basis-full gap-1 overflow-x-auto md:order-none md:basis-auto md:grow" aria-label="Main">
          {LINKS.map(([to, label]) => (
            <NavLink key={to} to={to}
              className={({ isActive }) => `rounded-md px-[7px] py-[5px] no-underline md:px-2.5 ${isActive ? "bg-panel-2 font-semibold !text-fg" : "!text-muted hover:!text-fg"}`}>
              {label}
            </NavLink>
          ))}
        </nav>
        <div className="ml-auto flex min-w-0 items-center gap-2">
          {me.data && <span className="muted min-w-0 truncate" aria-label="Signed in as">{me.data.display_name ?? me.data.name}</span>}
          <button type="button" onClick={openHelp} aria-label="Keyboard shortcuts" aria-keyshortcuts="?" title="Keyboard shortcuts (?)">?</button>
          <ThemeToggle />
        </div>
      </header>
      <ShortcutsHelp open={help} onOpenChange={setHelp} />
      <main className="relative min-h-0 overflow-auto" id="main">
        {body}
      </main>
    </div>
  );
}
