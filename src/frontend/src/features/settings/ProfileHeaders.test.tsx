import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Schemas } from "../../lib/api/client";
import { profileChanges, ProfileForm } from "./ProfileForm";
import { headerChanges, headerRow, newHeaders, storedRows } from "./ProfileHeaders";

const profile: Schemas["ProfileOut"] = {
  id: "p1", name: "gw", model: "openai/m", api_base: "https://gw.example/v1", api_key_set: false, api_key_masked: "",
  key_source: null, has_key: false, action: null, roles: [], extra_header_names: ["X-Org", "X-Token"],
  created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z", engine: "auto", temperature: null,
  max_tokens: null, timeout_s: null, num_retries: null, pricing_model: null, extra: {},
};
const same = { name: "gw", model: "openai/m", apiBase: "https://gw.example/v1", apiKey: "", removeKey: false };

describe("profile headers", () => {
  it("sends nothing when the stored headers are left as they are", () => {
    expect(headerChanges(["X-Org"], storedRows(["X-Org"]))).toBeUndefined();
    expect(profileChanges(profile, { ...same, headers: storedRows(profile.extra_header_names) })).toEqual({});
  });

  it("sends the whole set: null keeps a stored value, a value replaces, a left-out header is removed", () => {
    const [org, token] = storedRows(["X-Org", "X-Token"]);
    const added = { ...headerRow("X-New"), value: "v-new" };
    expect(headerChanges(["X-Org", "X-Token"], [org, { ...token, value: "rotated" }])).toEqual({ "X-Org": null, "X-Token": "rotated" });
    expect(headerChanges(["X-Org", "X-Token"], [org])).toEqual({ "X-Org": null });
    expect(headerChanges(["X-Org", "X-Token"], [org, token, added])).toEqual({ "X-Org": null, "X-Token": null, "X-New": "v-new" });
    expect(headerChanges(["X-Org"], [])).toBeNull();
    expect(headerChanges([], [headerRow()])).toBeUndefined(); // an empty new row is not a header
  });

  it("a new profile sends only complete headers", () => {
    expect(newHeaders([{ ...headerRow(" X-A "), value: "a" }, headerRow("X-B"), { ...headerRow(""), value: "x" }])).toEqual({ "X-A": "a" });
  });

  it("shows stored names with a set marker, never a value, and edits values in password fields", () => {
    render(<QueryClientProvider client={new QueryClient()}><ProfileForm editing={profile} /></QueryClientProvider>);
    const list = screen.getByRole("list", { name: "Headers" });
    expect(within(list).getAllByText("set")).toHaveLength(2);
    expect(within(list).getByText("X-Org")).toBeTruthy();
    const value = screen.getByLabelText("New value for X-Token (empty keeps it)") as HTMLInputElement;
    expect(value.type).toBe("password");
    expect(value.value).toBe("");
    expect(screen.getByRole("button", { name: "Save changes" })).toHaveProperty("disabled", true);

    fireEvent.click(screen.getByRole("button", { name: "Remove header X-Org" }));
    fireEvent.click(screen.getByRole("button", { name: "Add header" }));
    fireEvent.change(screen.getByLabelText("Header name"), { target: { value: "X-New" } });
    const added = screen.getByLabelText("Value of X-New") as HTMLInputElement;
    expect(added.type).toBe("password");
    expect(added.required).toBe(true);
    expect(screen.getByRole("button", { name: "Save changes" })).toHaveProperty("disabled", false);
  });

  it("warns that a new endpoint drops the stored header values", () => {
    render(<QueryClientProvider client={new QueryClient()}><ProfileForm editing={profile} /></QueryClientProvider>);
    fireEvent.change(screen.getByLabelText("API base URL (optional)"), { target: { value: "https://other.example/v1" } });
    expect(screen.getByRole("note").textContent).toContain("removes the stored header values");
  });
});
