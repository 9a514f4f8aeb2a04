import { setTheme, useTheme, type ThemeChoice } from "../lib/theme";

export function ThemeToggle() {
  const { choice } = useTheme();
  return (
    <label className="row" style={{ margin: 0 }}>
      <span className="sr-only">Theme</span>
      <select value={choice} onChange={(e) => setTheme(e.target.value as ThemeChoice)} aria-label="Theme" style={{ width: "auto" }}>
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}
