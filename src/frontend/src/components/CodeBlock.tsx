// Syntax-highlighted code with a bundled Prism (no network), themed for light and dark.
import { Highlight, themes } from "prism-react-renderer";
import { useTheme } from "../lib/theme";

export function CodeBlock({ code, language = "python" }: { code: string; language?: string }) {
  const { resolved } = useTheme();
  return (
    <Highlight code={code.replace(/\n$/, "")} language={language} theme={resolved === "dark" ? themes.vsDark : themes.github}>
      {({ className, style, tokens, getLineProps, getTokenProps }) => (
        <pre className={className} style={{ ...style, background: "var(--code-bg)" }} tabIndex={0} aria-label={`${language} code`}>
          {tokens.map((line, i) => (
            <div key={i} {...getLineProps({ line })}>
              {line.map((token, key) => (
                <span key={key} {...getTokenProps({ token })} />
              ))}
            </div>
          ))}
        </pre>
      )}
    </Highlight>
  );
}
