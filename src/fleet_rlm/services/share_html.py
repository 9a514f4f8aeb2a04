"""One self-contained HTML file for sharing a session: turns, each run as a tree on a shared time axis, answers,
artifacts. Opens offline and makes no request at all.

Safety by construction: every piece of user, model or sandbox text goes through `esc` (no markup survives), the
only attribute values are numbers and names from fixed sets, there is no script, and a strict CSP meta tag
(`default-src 'none'`; inline styles and data: images only) stops anything that slipped through from loading
or running. Collapsing is native `<details>`; the waterfall bars are inline-styled spans.
"""

from __future__ import annotations

import html
from datetime import datetime

from fleet_rlm.services.share_tree import ArtifactView, Node, RunView, Section, SessionView

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
KINDS = frozenset({"iteration", "lm", "code", "output", "tool", "sub_lm", "batch", "child", "event"})
OPEN_KINDS = frozenset({"iteration", "code", "tool", "batch", "child"})
MIN_BAR_PCT = 0.4

STYLE = """
:root{--fg:#1d232b;--mute:#5d6875;--line:#d9dee4;--bg:#fff;--soft:#f5f7f9;--code:#0f1720;--ok:#23864b;--bad:#b42318;
--warn:#b45309;--axis:180px}
*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);
overflow-wrap:anywhere}main{max-width:1100px;margin:0 auto;padding:24px}h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 8px}h3{font-size:14px;margin:12px 0 4px}.meta{color:var(--mute);font-size:12px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0;padding:8px 10px;background:var(--soft);
border-radius:6px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;max-height:480px;overflow:auto}
pre.code{background:var(--code);color:#e6edf3}pre.error{background:#fdecea;color:var(--bad)}
.redaction{border:1px solid #e3c565;background:#fffbeb;border-radius:8px;padding:10px 14px;margin:16px 0}
.redaction h2{margin:0 0 6px;font-size:14px}.redaction ul{margin:0;padding-left:18px}
.turn{border-top:1px solid var(--line);margin-top:20px}.user pre{background:#eef4ff}
.answer pre{background:#ecfdf3;border-left:3px solid var(--ok)}
details{margin:1px 0}details>summary{cursor:pointer;list-style:none}
details>summary::-webkit-details-marker{display:none}
.twist{color:var(--mute);width:12px;display:inline-block}.twist::before{content:"\\25B8"}
details[open]>summary.row .twist::before,.run[open]>summary .twist::before{content:"\\25BE"}
.twist.leaf::before{content:""}
.run{border:1px solid var(--line);border-radius:8px;padding:6px 10px;margin:8px 0}
.run>summary{font-weight:600}.tree{margin-top:6px}
.node .node{margin-left:6px;border-left:2px solid var(--line);padding-left:6px}
.row{display:grid;grid-template-columns:minmax(0,1fr) 64px var(--axis);gap:2px 8px;align-items:center;
padding:2px 0}
.label{min-width:0;display:flex;gap:6px;align-items:baseline}.title{font-weight:600;flex:0 0 auto;
white-space:nowrap}.sub{flex:1 1 auto;min-width:0;color:var(--mute);font-size:12px;overflow:hidden;
text-overflow:ellipsis;white-space:nowrap}.dur{text-align:right;color:var(--mute);font-size:12px;
white-space:nowrap}.axis{height:8px;position:relative;background:var(--soft);border-radius:3px}
.bar{position:absolute;top:0;height:8px;border-radius:3px;background:#6b8afd}
.k-lm>.row .bar,.k-lm>summary .bar{background:#64748b}.k-code>summary .bar,.k-code>.row .bar{background:#0ea5e9}
.k-sub_lm>.row .bar,.k-sub_lm>summary .bar{background:#f59e0b}.k-child>summary .bar{background:#a855f7}
.k-batch>summary .bar{background:#fbbf24}.k-tool>summary .bar,.k-tool>.row .bar{background:#14b8a6}
.k-event>.row .bar,.k-event>summary .bar,.k-output>summary .bar{background:#9aa4af}
.k-iteration>summary .title{color:#1e40af}.k-child>summary .title{color:#7e22ce}
.bad{color:var(--bad);font-weight:600}.ok{color:var(--ok)}.warn{color:var(--warn)}.sec{margin:2px 0 6px 18px}
.sec-label{font-size:12px;color:var(--mute)}
.artifact img{max-width:100%;border:1px solid var(--line);border-radius:6px}
footer{margin:40px 0 10px;color:var(--mute);font-size:12px}
@media (max-width:640px){main{padding:12px}h1{font-size:19px}.run{padding:6px}
.row{grid-template-columns:minmax(0,1fr) auto}.axis{grid-column:1/-1;margin-left:18px}
.node .node{margin-left:2px;padding-left:5px}.sec{margin-left:4px}.label{flex-wrap:wrap;row-gap:0}
.sub{flex-basis:100%;padding-left:18px}}
"""


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def render_html(view: SessionView) -> str:
    session = view.bundle.session
    title = session.title or "untitled session"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)} · fleet-rlm</title>",
        f"<style>{STYLE}</style></head><body><main>",
        f"<header><h1>{esc(title)}</h1>",
        f'<div class="meta">session {esc(session.id)} · {_count(len(view.turns), "turn")} · '
        f"exported {_when(view.bundle.exported_at)} by fleet-rlm</div>",
    ]
    if session.forked_from_id:
        parts.append(
            f'<div class="meta">forked from session {esc(session.forked_from_id)} after turn '
            f"{esc(session.forked_after_turn)}</div>"
        )
    parts.append("</header>")
    parts.append('<section class="redaction" id="redaction"><h2>Redaction</h2><ul>')
    parts += [f"<li>{esc(line)}</li>" for line in view.redaction]
    parts.append("</ul></section>")
    for run in view.other_runs:
        if run.nodes:  # a fork's record has no steps: the header already says where it was forked from
            parts.append(_run(run, label="Session record"))
    for turn in view.turns:
        parts.append(f'<section class="turn" id="turn-{turn.number}"><h2>Turn {turn.number}</h2>')
        parts.append(f'<div class="user"><h3>User</h3><pre>{esc(turn.message)}</pre></div>')
        parts += [_run(run) for run in turn.runs]
        if turn.answer:
            parts.append(f'<div class="answer"><h3>Answer</h3><pre>{esc(turn.answer)}</pre></div>')
        else:
            parts.append('<div class="answer meta">(no answer)</div>')
        parts.append("</section>")
    if view.artifacts:
        parts.append('<section class="artifacts" id="artifacts"><h2>Artifacts</h2>')
        parts += [_artifact(a) for a in view.artifacts]
        parts.append("</section>")
    parts.append(
        "<footer>A self-contained export: no scripts, no external requests. "
        "Steps are grouped as in the workbench's trace view.</footer>"
    )
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


def _run(view: RunView, label: str = "Run") -> str:
    run = view.run
    stats = view.stats
    status_class = "ok" if run.status == "succeeded" else "bad"
    counts = " · ".join(view.counts())
    tokens = run.usage.get("tokens_in"), run.usage.get("tokens_out")
    usage = f" · tokens {esc(tokens[0])} in / {esc(tokens[1])} out" if tokens[0] is not None else ""
    head = (
        f'<details class="run" open><summary><span class="twist"></span>{esc(label)} · {esc(run.execution_mode)} · '
        f'<span class="{status_class}">{esc(run.status)}</span> · {_dur(view.total_ms)}</summary>'
        f'<div class="meta">run {esc(run.id)} · {counts}{usage}</div>'
    )
    body = "".join(_node(node, view) for node in view.nodes) or '<div class="meta">(no steps)</div>'
    note = f'<div class="meta">showing the first {stats["events"]} events only</div>' if view.truncated else ""
    return f'{head}<div class="tree">{body}</div>{note}</details>'


def _node(node: Node, run: RunView) -> str:
    kind = node.kind if node.kind in KINDS else "event"
    status = ' <span class="bad">failed</span>' if node.ok is False else ""
    sub = f'<span class="sub">{esc(node.subtitle)}</span>' if node.subtitle else ""
    inner = "".join(_section(s) for s in node.sections) + "".join(_node(child, run) for child in node.children)
    twist = '<span class="twist"></span>' if inner else '<span class="twist leaf"></span>'
    row = (
        f'<span class="label">{twist}<span class="title">{esc(node.title)}{status}</span>{sub}</span>'
        f'<span class="dur">{_dur(node.duration_ms)}</span>{_bar(node, run)}'
    )
    if not inner:
        return f'<div class="node k-{kind}"><div class="row">{row}</div></div>'
    opened = " open" if kind in OPEN_KINDS else ""
    return f'<details class="node k-{kind}"{opened}><summary class="row">{row}</summary>{inner}</details>'


def _bar(node: Node, run: RunView) -> str:
    total = max(run.total_ms, 1)
    left = min(100.0, max(0.0, (node.start - run.start).total_seconds() * 1000 / total * 100))
    width = min(100.0 - left, max(MIN_BAR_PCT, node.duration_ms / total * 100))
    return f'<span class="axis"><span class="bar" style="left:{left:.2f}%;width:{width:.2f}%"></span></span>'


def _section(section: Section) -> str:
    style = section.style if section.style in ("code", "output", "error") else "text"
    label = f'<div class="sec-label">{esc(section.label)}</div>' if section.label else ""
    return f'<div class="sec">{label}<pre class="{style}">{esc(section.text)}</pre></div>'


def _artifact(artifact: ArtifactView) -> str:
    head = (
        f'<div class="artifact"><h3>{esc(artifact.name)}</h3>'
        f'<div class="meta">{esc(artifact.media_type or "unknown type")} · {artifact.size} bytes'
        f"{' · ' + esc(artifact.note) if artifact.note else ''}</div>"
    )
    if artifact.data_uri is not None:  # built by share.py from verified image bytes: data:image/...;base64
        return f'{head}<img alt="{esc(artifact.name)}" src="{esc(artifact.data_uri)}"></div>'
    if artifact.text is not None:
        return f"{head}<pre>{esc(artifact.text)}</pre></div>"
    return f"{head}</div>"


def _dur(ms: int) -> str:
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000} min {ms % 60_000 // 1000} s"


def _when(value: datetime) -> str:
    return esc(value.strftime("%Y-%m-%d %H:%M UTC"))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
