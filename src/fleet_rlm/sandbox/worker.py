"""fleet-rlm sandbox worker: a persistent Python REPL speaking framed JSON on dedicated file descriptors.

Standard library only and self-contained, so the same file runs locally (pipes, inside bubblewrap) and inside
Daytona (as text lines, worker_lines.py): `python -I worker.py --in FD --out FD [--uid U --gid G]`.
Frames: `>II` (header, body lengths) + JSON header + raw body. Host -> worker: exec, reply, interrupt, shutdown;
worker -> host: ready, call (guest tool call), done. Protocol fds move to high close-on-exec numbers and fds 0-2
are re-pointed, so prints never reach the channel. Guest code shares this process and *can* still write to those
fds; the host treats every frame as untrusted and a malformed one ends the sandbox.
Guest code also shares the interpreter: worker_guard.py keeps its changes to `builtins` and stdlib modules out
of the worker's machinery.
"""

import _signal
import _thread
import builtins
import gc
import io
import itertools
import os
import struct
import sys
from _queue import SimpleQueue

# Start-up imports are only modules written in C (or loaded before any code runs): the `threading`, `queue`,
# `signal`, `ast`, `json` and `traceback` packages import `functools`, `collections`, `enum` and `re`, which
# were two thirds of a sandbox start's CPU. Errors load `traceback` when they happen (format_exception).


_HERE = os.path.dirname(os.path.abspath(__file__))
"""The worker's code directory: its sibling modules and the host's seed of compiled cells."""


def _sibling(name):
    """A stdlib-only module shipped next to this file (bound, uploaded or baked with it)."""
    sys.path.insert(0, _HERE)
    try:
        __import__(name)
        return sys.modules[name]
    finally:
        sys.path.remove(_HERE)


_capture = _sibling("worker_capture")
Capture, hide_fd, reopen_std_fds, text_stream = (
    _capture.Capture,
    _capture.hide_fd,
    _capture.reopen_std_fds,
    _capture.text_stream,
)
_cells = _sibling("worker_cells")
_globals = _sibling("worker_globals")
_guard = _sibling("worker_guard")
_json = _sibling("worker_json")
_state = _sibling("worker_state")
_tracebacks = _sibling("worker_tracebacks")
own_modules, guest_builtins = _guard.own_modules, _guard.guest_builtins
CELL_PREFIX, CellSources, format_exception, safe_repr = (
    _tracebacks.CELL_PREFIX,
    _tracebacks.CellSources,
    _tracebacks.format_exception,
    _tracebacks.safe_repr,
)

PREFIX = struct.Struct(">II")
MAX_FRAME = 1 << 31
VALUE_MAX_CHARS = 4_000_000  # a last-expression value larger than this as JSON crosses as its repr text only


class Submission(BaseException):
    """Raised by SUBMIT to end the cell; BaseException so a bare `except Exception` cannot swallow it."""

    def __init__(self, value):
        super().__init__()
        self.value = value


class ToolError(RuntimeError):
    """A host tool (llm_query, a registered tool) raised; the message names the host exception."""


class Channel:
    """Reads and writes frames on the hidden protocol descriptors."""

    def __init__(self, in_fd, out_fd):
        self.in_fd, self.out_fd, self.lock = in_fd, out_fd, _thread.allocate_lock()

    def send(self, header, body=b""):
        raw = _json.dumps(header, compact=True, default=repr).encode("utf-8")
        data = memoryview(PREFIX.pack(len(raw), len(body)) + raw + body)
        with self.lock:
            while data:
                data = data[os.write(self.out_fd, data) :]

    def _read_exact(self, size, at_start=False):
        buf, got = bytearray(size), 0
        view = memoryview(buf)
        while got < size:
            n = os.readv(self.in_fd, [view[got:]])
            if n == 0:
                if got == 0 and at_start:
                    return None
                raise EOFError("stream ended inside a frame")
            got += n
        return buf

    def recv(self):
        prefix = self._read_exact(PREFIX.size, at_start=True)
        if prefix is None:
            return None
        header_len, body_len = PREFIX.unpack(prefix)
        if header_len == 0 or header_len > MAX_FRAME or body_len > MAX_FRAME:
            raise ValueError("bad frame length")
        header = _json.loads(bytes(self._read_exact(header_len)).decode("utf-8"))
        return header, self._read_exact(body_len) if body_len else bytearray()


def jsonable(value):
    """Values crossing to the host: JSON as is, tuples/sets as lists, anything else as its repr."""
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=lambda v: (type(v).__name__, v if isinstance(v, (int, float, str)) else 0))
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): jsonable(v) for k, v in value.items()}
    return value if value is None or isinstance(value, (bool, int, float, str)) else repr(value)


class Worker:
    def __init__(self, channel, workspace, reap=None, context=None, guest_builtins=builtins):
        self.channel = channel
        self.reap = reap  # how guest processes end after each cell (worker_procs)
        self.commands: SimpleQueue = SimpleQueue()
        self.pending, self.pending_lock, self.call_ids = {}, _thread.allocate_lock(), itertools.count(1)
        self.inputs, self.tool_names, self.output_fields, self.cell_no = {}, [], None, 0
        self.report_globals, self.report_state = False, None
        self.state_sent = {}  # name -> the text last sent of it (worker_state.capture sends only changes)
        self.setup_names = set()  # names bound by cells that keep no state (the host's setup): not REPL state
        self.cell_lock, self.cell_active, self.interrupt_requested = _thread.allocate_lock(), False, False
        self.main_ident, self.sources = _thread.get_ident(), CellSources()
        self.namespace = {"__name__": "__main__", "__builtins__": guest_builtins}
        self.capture = Capture()
        self.namespace.update(_workspace_names(workspace, context))
        self.namespace["ToolError"] = ToolError
        self.namespace["SUBMIT"] = self._make_submit(None)
        self.submits = {}  # SUBMIT built for each output-field list (the host names them at every cell)
        self.compiled = _cells.CompiledCells(_cells.read_seed(_HERE))
        self.hidden = frozenset(self.namespace)  # the worker's own names: never reported as REPL state
        _signal.signal(_signal.SIGINT, self._on_sigint)

    # --- incoming frames -----------------------------------------------------------------------------------
    def read_loop(self):
        try:
            while True:
                frame = self.channel.recv()
                if frame is None:
                    break
                header, body = frame
                kind = header.get("t")
                if kind == "reply":
                    with self.pending_lock:
                        slot = self.pending.get(header.get("id"), SimpleQueue())  # unknown id: dropped
                    slot.put(header)
                elif kind == "interrupt":
                    self._interrupt()
                else:
                    self.commands.put((header, body))
        except Exception as exc:
            self.commands.put(({"t": "fatal", "error": f"{type(exc).__name__}: {exc}"}, b""))
        self.commands.put(None)
        with self.pending_lock:
            for slot in self.pending.values():
                slot.put(None)

    def _interrupt(self):
        with self.cell_lock:
            if self.cell_active:
                self.interrupt_requested = True
                _signal.pthread_kill(self.main_ident, _signal.SIGINT)

    def _on_sigint(self, signum, frame):
        if self.cell_active:
            raise KeyboardInterrupt

    # --- guest-facing host calls ---------------------------------------------------------------------------
    def call_host(self, name, args, kwargs):
        call_id = next(self.call_ids)
        slot: SimpleQueue = SimpleQueue()
        with self.pending_lock:
            self.pending[call_id] = slot
        try:
            try:
                self.channel.send({"t": "call", "id": call_id, "name": name, "args": args, "kwargs": kwargs})
            except (TypeError, ValueError) as exc:
                raise TypeError(f"arguments of {name}() must be JSON-serializable: {exc}") from None
            reply = slot.get()
        finally:
            with self.pending_lock:
                self.pending.pop(call_id, None)
        if reply is None:
            raise ToolError(f"{name}: the host connection was lost")
        if reply.get("ok"):
            return reply.get("value")
        raise ToolError(f"{name} failed: {reply.get('error', 'unknown error')}")

    def _make_tool(self, name):
        def tool(*args, **kwargs):
            return self.call_host(name, list(args), kwargs)

        tool.__name__ = tool.__qualname__ = name
        tool.__doc__ = f"Host tool {name}: runs on the host; arguments and result are JSON."
        return tool

    def _make_submit(self, fields):
        if not fields:

            def submit_any(*args, **kwargs):
                if len(args) == 1 and not kwargs:
                    raise Submission({"output": args[0]})
                if kwargs and not args:
                    raise Submission(dict(kwargs))
                raise TypeError("SUBMIT() takes one value, or keyword values")

            submit_any.__name__ = submit_any.__qualname__ = "SUBMIT"
            return submit_any
        import keyword  # small, and only a typed SUBMIT needs it

        names = [f["name"] for f in fields]
        if not all(name.isidentifier() and not keyword.iskeyword(name) for name in names):
            raise ValueError(f"output field names must be identifiers: {names}")
        scope: dict = {}  # a real function with the fields as parameters: Python binds the arguments (no inspect)
        exec(f"def SUBMIT({', '.join(names)}):\n    return {{{', '.join(f'{n!r}: {n}' for n in names)}}}", scope)
        bind = scope["SUBMIT"]
        types = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict}
        bind.__annotations__ = {f["name"]: types[f["type"]] for f in fields if f.get("type") in types}

        def submit_typed(*args, **kwargs):
            try:
                values = bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"SUBMIT({', '.join(names)}): {str(exc).removeprefix('SUBMIT() ')}") from None
            raise Submission(values)

        # what functools.wraps copies: help(SUBMIT) and inspect.signature (via __wrapped__) show the fields
        for attr in ("__module__", "__name__", "__qualname__", "__doc__", "__annotations__"):
            setattr(submit_typed, attr, getattr(bind, attr))
        submit_typed.__wrapped__ = bind  # type: ignore[attr-defined]
        return submit_typed

    def _submit_for(self, fields):
        """The SUBMIT for these output fields, built once per distinct list (a guest rebinding SUBMIT still
        gets the real one back at the next cell)."""
        key = _json.dumps(fields, compact=True, default=repr)
        submit = self.submits.get(key)
        if submit is None:
            submit = self.submits[key] = self._make_submit(fields)
        return submit

    # --- cells ---------------------------------------------------------------------------------------------
    def apply_inputs(self, header, body):
        view = memoryview(body)
        for name, value in (header.get("vars") or {}).items():
            self.inputs[name] = value
        for name, start, end, kind in header.get("blobs") or []:
            raw = view[start:end]  # decoded in place: a bytes copy would hold the context a third time
            self.inputs[name] = str(raw, "utf-8", "surrogatepass") if kind == "str" else _json.loads(str(raw, "utf-8"))
        for name in header.get("drop") or []:
            self.inputs.pop(name, None)
        if "tools" in header:
            for name in self.tool_names:
                self.namespace.pop(name, None)
            self.tool_names = list(header["tools"])
        if "outputs" in header:
            self.output_fields = header["outputs"]
            self.namespace["SUBMIT"] = self._submit_for(self.output_fields)
        for name in self.tool_names:
            self.namespace[name] = self._make_tool(name)
        self.namespace.update(self.inputs)

    def run_cell(self, header, body):
        self.apply_inputs(header, body)
        code = header.get("code", "")
        self.cell_no += 1
        filename = f"{CELL_PREFIX}{self.cell_no}>"
        self.sources.add(filename, code)
        result = {"t": "done", "id": header.get("id"), "cell": self.cell_no}
        self.report_globals = bool(header.get("globals"))
        self.report_state = header.get("state")  # "full" | "delta" | None (worker_state.py)
        if header.get("restore"):
            result["restored"], result["not_restored"] = _state.restore(self.namespace, header["restore"])
        before = None if self.report_state else set(self.namespace)
        with self.capture.start(int(header.get("output_limit", 20000))) as capture:
            with self.cell_lock:
                self.cell_active = True
                self.interrupt_requested = False
            try:
                result.update(self._exec(code, filename, bool(header.get("value", True))))
            except Submission as sub:
                result.update(kind="final", value=jsonable(sub.value))
            except KeyboardInterrupt as exc:
                kind = "interrupted" if self.interrupt_requested else "error"
                result.update(kind=kind, error=format_exception(exc))
            except BaseException as exc:
                result.update(kind="error", error=format_exception(exc))
            finally:
                with self.cell_lock:
                    self.cell_active = False
        if before is not None:
            self.setup_names.update(name for name in list(self.namespace) if name not in before)
        return self._report(result, capture)

    def _report(self, result, capture):
        """The `done` frame of a finished cell: the one place its report is built (kind, error or value fields
        from `run_cell`, then what it printed, then the REPL's user-visible globals when the host asked for them
        (worker_globals: bounded, and a hostile __repr__ is time-limited), then the REPL's durable state
        (worker_state: the variables that changed, as data). Add further per-cell facts here."""
        result["output"], result["omitted"] = capture.text()
        if self.report_globals:
            names = set(self.tool_names)
            result["globals"], result["globals_omitted"] = _globals.snapshot(
                self.namespace, self.hidden | names, self.inputs
            )
        if self.report_state:
            if self.report_state == "full":
                self.state_sent = {}
            hidden = self.hidden | self.setup_names | set(self.tool_names) | set(self.inputs)
            result["state"] = _state.capture(self.namespace, hidden, self.state_sent)
        return result

    def _exec(self, code, filename, want_value):
        try:
            body, last = self.compiled.get(code, filename)  # worker_cells: compiled once per source when large
        except SyntaxError as exc:
            where = {"lineno": exc.lineno, "offset": exc.offset, "text": exc.text}
            return {"kind": "syntax", "error": str(exc.msg), **where}
        exec(body, self.namespace)
        if last is None:
            return {"kind": "ok"}
        value = eval(last, self.namespace)
        return {"kind": "ok", **last_value(value, want_value)}

    def serve(self):
        _thread.start_new_thread(self.read_loop, ())
        self.channel.send({"t": "ready", "pid": os.getpid(), "uid": os.getuid(), "python": sys.version})
        while True:
            try:
                item = self.commands.get()
                if item is None:
                    return
                header, body = item
                kind = header.get("t")
                if kind in ("shutdown", "fatal"):
                    return
                if kind == "exec":
                    try:
                        result = self.run_cell(header, body)
                    except Exception as exc:  # e.g. no thread for the capture: process limit reached
                        result = {"t": "done", "id": header.get("id"), "kind": "error", "output": ""}
                        result["error"] = f"{type(exc).__name__}: {exc} (the cell did not run)"
                    if self.reap is not None:
                        self.reap()
                    self.channel.send(result)
            except KeyboardInterrupt:
                continue


def last_value(value, want_value=True):
    """What the host gets of a cell's last expression: always its repr text (the REPL transcript), and the value
    itself, JSON-encoded, when it is JSON and the host wants values (dspy's `CodeInterpreter.execute` returns
    it; a transcript-only host skips the encoding). None gives nothing."""
    if value is None:
        return {}
    fields = {"repr": safe_repr(value)}
    if not want_value:
        return fields
    try:  # encoded now, so guest threads mutating the value later cannot break the `done` frame
        encoded = _json.dumps(value, allow_nan=False)
    except Exception:  # not JSON (or a hostile container): the repr is all that crosses
        return fields
    if len(encoded) <= VALUE_MAX_CHARS:
        fields["json"] = encoded
    return fields


def _workspace_names(root, context=None):
    subs = ("memory", "artifacts", "buffers", "meta")
    names = {"WORKSPACE_ROOT": root, **{f"{sub.upper()}_DIR": os.path.join(root, sub) for sub in subs}}
    return {**names, "CONTEXT_DIR": context} if context else names


def _drop_privileges(uid, gid):
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid:
        raise SystemExit("fleet worker: could not drop privileges")
    os.umask(0o002)


def _apply_limits(spec):
    """`as=N,cpu=N,...`: soft = hard, so guest code cannot raise them back once privileges are dropped."""
    import resource

    keys = ("as", "cpu", "fsize", "nproc", "nofile", "core")
    names = {key: getattr(resource, "RLIMIT_" + key.upper()) for key in keys}
    for item in filter(None, spec.split(",")):
        key, _, value = item.partition("=")
        resource.setrlimit(names[key], (int(value), int(value) + (5 if key == "cpu" else 0)))


def _parse_args(argv):
    opts = {"--in": "0", "--out": "1", "--uid": None, "--gid": None, "--workspace": None, "--limits": ""}
    opts.update({"--reap": "tree", "--context": None})
    return {**opts, **dict(zip(argv[::2], argv[1::2], strict=False))}


def _add_site_packages():
    """Started with `-S` (no .pth files run), the guest still imports the interpreter's installed packages."""
    if not sys.flags.no_site:
        return
    import site

    for path in site.getsitepackages():
        if path not in sys.path and os.path.isdir(path):
            sys.path.append(path)


def main(argv, channel_type=None):
    opts = _parse_args(argv)
    _add_site_packages()
    _apply_limits(opts["--limits"])
    if opts["--uid"] is not None and os.getuid() == 0:
        _drop_privileges(int(opts["--uid"]), int(opts["--gid"] or opts["--uid"]))
    in_fd, out_fd = hide_fd(int(opts["--in"])), hide_fd(int(opts["--out"]))
    for fd in (0, 1, 2):
        os.close(fd)
    reopen_std_fds()
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout, sys.stderr = text_stream(1), text_stream(2)
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
    workspace = opts["--workspace"] or os.environ.get("WORKSPACE_ROOT") or os.getcwd()
    if os.path.isdir(workspace):
        os.chdir(workspace)
    procs = _sibling("worker_procs")
    if opts["--reap"] == "tree":
        procs.become_subreaper()
    reap_mode = opts["--reap"]

    def reap():
        procs.end_guest_processes(reap_mode)

    channel_type = channel_type or Channel
    for module in (
        sys.modules[__name__],
        _capture,
        _cells,
        _globals,
        _guard,
        _json,
        _state,
        _tracebacks,
        procs,
        sys.modules[channel_type.__module__],
    ):
        own_modules(vars(module))
    channel = channel_type(in_fd, out_fd)
    worker = Worker(channel, workspace, reap=reap, context=opts["--context"], guest_builtins=guest_builtins())
    gc.enable()  # off while the worker started (worker_code._BOOT); guest code gets the usual collector
    try:
        worker.serve()
    finally:
        os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
