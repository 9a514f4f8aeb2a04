// Multipart upload of one attachment (openapi-fetch's JSON body does not cover multipart streaming).
import { rawFetch, type Schemas } from "../../lib/api/client";

export async function uploadAttachment(file: File, sessionId?: string): Promise<Schemas["AttachmentOut"]> {
  const form = new FormData();
  form.append("file", file, file.name);
  if (sessionId) form.append("session_id", sessionId);
  const response = await rawFetch("/api/v1/attachments", { method: "POST", body: form });
  return (await response.json()) as Schemas["AttachmentOut"];
}
