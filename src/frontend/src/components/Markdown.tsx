// Markdown for answers and files. Raw HTML is dropped (skipHtml) and react-markdown's default URL transform
// strips javascript: and other unsafe links, so model output cannot inject markup or script. GFM adds tables
// (optimization reports, model answers), strikethrough and task lists.
import ReactMarkdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { CodeBlock } from "./CodeBlock";

export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown
        skipHtml
        remarkPlugins={[remarkGfm]}
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
        }}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}
