// MCP servers whose tools your turns may call: yours (add, enable/disable, delete) and the operator's
// (read-only). Secrets (env values, headers) are write-only: only their names come back.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Empty, ErrorView, Loading } from "../../components/States";
import { api, call, type Schemas } from "../../lib/api/client";
import { refreshAfterWrite } from "../../lib/refresh";

const split = (text: string) => text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);

export function McpServers() {
  const client = useQueryClient();
  const list = useQuery({ queryKey: ["mcp-servers"], queryFn: () => call(api.GET("/api/v1/mcp-servers")) });
  const refresh = () => refreshAfterWrite(client, { queryKey: ["mcp-servers"] });
  const create = useMutation({ mutationFn: (body: Schemas["McpServerCreate"]) => call(api.POST("/api/v1/mcp-servers", { body })), onSuccess: refresh });
  const patch = useMutation({
    mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) =>
      call(api.PATCH("/api/v1/mcp-servers/{server_id}", { params: { path: { server_id: id } }, body: { enabled } })),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: string) => call(api.DELETE("/api/v1/mcp-servers/{server_id}", { params: { path: { server_id: id } } })),
    onSuccess: refresh,
  });
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [tools, setTools] = useState("*");
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    await create.mutateAsync({ name: name.trim(), url: url.trim(), tools: split(tools), enabled: true });
    setName("");
    setUrl("");
  };
  const items = list.data?.items ?? [];
  return (
    <section className="panel stack" aria-labelledby="mcp-title">
      <h2 id="mcp-title" style={{ fontSize: 16, margin: 0 }}>MCP servers</h2>
      {list.isPending && <Loading />}
      {list.error && <ErrorView error={list.error} />}
      {list.data && items.length === 0 && <Empty>No MCP servers: turns use the built-in tools only.</Empty>}
      {items.length > 0 && (
        <div className="relative min-w-0 overflow-x-auto">
          <table aria-label="MCP servers">
            <thead><tr><th>Name</th><th>Where</th><th>Tools</th><th>Owner</th><th><span className="sr-only">Actions</span></th></tr></thead>
            <tbody>
              {items.map((s) => (
                <tr key={`${s.owner}-${s.name}`}>
                  <td>{s.name}</td>
                  <td><code>{s.transport === "http" ? s.url : [s.command, ...s.args].join(" ")}</code></td>
                  <td>{s.tools.join(", ")}</td>
                  <td>{s.owner}</td>
                  <td>{s.owner === "user" && s.id && (
                    <div className="row">
                      <label className="!m-0 !inline-flex items-center gap-1 !text-[14px] !text-fg [&>input]:!w-auto"><input type="checkbox" checked={s.enabled} onChange={(e) => patch.mutate({ id: s.id!, enabled: e.target.checked })} /> enabled</label>
                      <button className="danger" onClick={() => remove.mutate(s.id!)} aria-label={`Delete MCP server ${s.name}`}>Delete</button>
                    </div>
                  )}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form className="row" onSubmit={(e) => void submit(e).catch(() => undefined)} aria-label="Add an MCP server">
        <div><label htmlFor="mcp-name">Name</label><input id="mcp-name" required pattern="[a-z][a-z0-9_]{0,31}" title="lower-case letters, digits and _" placeholder="docs_search" value={name} onChange={(e) => setName(e.target.value)} /></div>
        <div className="grow"><label htmlFor="mcp-url">Streamable HTTP URL</label><input id="mcp-url" required type="url" placeholder="https://…/mcp" value={url} onChange={(e) => setUrl(e.target.value)} /></div>
        <div><label htmlFor="mcp-tools">Tools allowed</label><input id="mcp-tools" value={tools} onChange={(e) => setTools(e.target.value)} /></div>
        <button className="primary self-end" type="submit" disabled={create.isPending || !name.trim() || !url.trim()}>Add server</button>
      </form>
      {[create.error, patch.error, remove.error].filter(Boolean).map((e, i) => <ErrorView key={i} error={e} />)}
    </section>
  );
}
