// Syntax-highlighted code with a bundled Prism (no network), themed for light and dark. The colours are
// chosen for WCAG AA contrast on the code background (Prism's stock GitHub palette is below 4.5:1).
import { Highlight, themes, type PrismTheme } from "prism-react-renderer";
import { useTheme } from "../lib/theme";

const light: PrismTheme = {
  plain: { color: "#24292f", backgroundColor: "var(--code-bg)" },
  styles: [
    { types: ["comment", "prolog", "doctype", "cdata"], style: { color: "#57606a", fontStyle: "italic" } },
    { types: ["string", "attr-value", "char", "template-string"], style: { color: "#0a3069" } },
    { types: ["punctuation", "operator"], style: { color: "#24292f" } },
    { types: ["number", "boolean", "constant", "variable", "property", "regex", "symbol", "url", "entity", "inserted"], style: { color: "#0550ae" } },
    { types: ["keyword", "atrule", "attr-name", "selector", "builtin"], style: { color: "#cf222e" } },
    { types: ["function", "function-variable"], style: { color: "#6639ba" } },
    { types: ["class-name", "tag", "deleted"], style: { color: "#953800" } },
    { types: ["namespace"], style: { opacity: 0.8 } },
  ],
};

// vsDark, less its few colours under 4.5:1 on our dark code background
const dark: PrismTheme = {
  plain: { ...themes.vsDark.plain, backgroundColor: "var(--code-bg)" },
  styles: [
    ...themes.vsDark.styles,
    { types: ["prolog", "comment"], style: { color: "#6a9955" } },
    { types: ["constant"], style: { color: "#8b8bd0" } },
    { types: ["punctuation"], style: { color: "#a0a0a0" } },
  ],
};

export function CodeBlock({ code, language = "python" }: { code: string; language?: string }) {
  const { resolved } = useTheme();
  return (
    <Highlight code={code.replace(/\n$/, "")} language={language} theme={resolved === "dark" ? dark : light}>
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
