// Markdown and highlighted code are fetched on first use (their parsers are most of the bundle); until then
// the raw text shows, so nothing jumps or goes blank.
import { lazy, Suspense } from "react";

const MarkdownImpl = lazy(() => import("./Markdown").then((m) => ({ default: m.Markdown })));
const CodeBlockImpl = lazy(() => import("./CodeBlock").then((m) => ({ default: m.CodeBlock })));

export function Markdown({ text }: { text: string }) {
  return (
    <Suspense fallback={<div className="whitespace-pre-wrap">{text}</div>}>
      <MarkdownImpl text={text} />
    </Suspense>
  );
}

export function CodeBlock({ code, language = "python" }: { code: string; language?: string }) {
  return (
    <Suspense fallback={<pre>{code}</pre>}>
      <CodeBlockImpl code={code} language={language} />
    </Suspense>
  );
}
