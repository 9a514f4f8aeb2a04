// Light/dark/system theme, remembered in localStorage and applied as <html data-theme>.
import { useSyncExternalStore } from "react";

export type ThemeChoice = "system" | "light" | "dark";
const KEY = "fleet.theme";
const listeners = new Set<() => void>();

function choice(): ThemeChoice {
  const stored = typeof localStorage !== "undefined" ? localStorage.getItem(KEY) : null;
  return stored === "light" || stored === "dark" ? stored : "system";
}

function systemDark(): boolean {
  return typeof window !== "undefined" && !!window.matchMedia?.("(prefers-color-scheme: dark)").matches;
}

export function resolveTheme(value: ThemeChoice = choice()): "light" | "dark" {
  return value === "system" ? (systemDark() ? "dark" : "light") : value;
}

export function applyTheme(): void {
  document.documentElement.dataset.theme = resolveTheme();
}

export function setTheme(value: ThemeChoice): void {
  if (value === "system") localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, value);
  applyTheme();
  listeners.forEach((listener) => listener());
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useTheme(): { choice: ThemeChoice; resolved: "light" | "dark" } {
  const current = useSyncExternalStore(subscribe, choice, () => "system" as ThemeChoice);
  return { choice: current, resolved: resolveTheme(current) };
}
