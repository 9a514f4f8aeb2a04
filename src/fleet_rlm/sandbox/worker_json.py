"""JSON for the sandbox worker, on CPython's C accelerator (`_json`) instead of the `json` package.

`import json` imports `re`, and with it `enum`: ~3.5 ms of every sandbox start, for a worker that needs only
`dumps` and strict `loads`. `_json` provides both. This module builds them and checks them once against known
text; where `_json` is missing or behaves differently (another Python), it falls back to `json`.
Standard library only, shipped next to `worker.py`.
"""

_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_WHITESPACE = " \t\n\r"


class _Strict:
    """What `json.loads` passes its C scanner by default: strict strings, plain dicts, NaN/Infinity allowed."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_CONSTANTS.__getitem__)


def _c_codec():
    # bound now: a cell that rebinds `_json.make_encoder` (the module is shared with the guest) changes nothing here
    from _json import encode_basestring, make_encoder, make_scanner

    def dumps(value, *, compact=False, allow_nan=True, default=None):
        separators = (":", ",") if compact else (": ", ", ")  # (key, item), as json orders them
        # markers {}: a cyclic value raises ValueError, as in json
        encode = make_encoder({}, default or _no_default, encode_basestring, None, *separators, False, False, allow_nan)
        return "".join(encode(value, 0))

    def loads(text):
        start = len(text) - len(text.lstrip(_WHITESPACE))
        try:
            value, end = make_scanner(_Strict())(text, start)  # type: ignore[arg-type]
        except StopIteration:
            raise ValueError("not JSON") from None
        if text[end:].strip(_WHITESPACE):
            raise ValueError("extra data after the JSON value")
        return value

    return dumps, loads


def _no_default(value):
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _json_codec():
    from json import dumps as json_dumps  # bound now, as in _c_codec
    from json import loads

    def dumps(value, *, compact=False, allow_nan=True, default=None):
        separators = (",", ":") if compact else None
        return json_dumps(value, separators=separators, ensure_ascii=False, allow_nan=allow_nan, default=default)

    return dumps, loads


def _checked(codec):
    dumps, loads = codec()
    sample = {"a": [1, 2.5, -0.0, 'é\n"', None, True, False, {"b": []}], "ü": 10**20}
    expected = '{"a":[1,2.5,-0.0,"é\\n\\"",null,true,false,{"b":[]}],"ü":100000000000000000000}'
    if dumps(sample, compact=True) != expected or loads(expected) != sample or dumps("x") != '"x"':
        raise ValueError("this Python's _json differs from json")
    return dumps, loads


try:
    dumps, loads = _checked(_c_codec)
except Exception:  # no _json, or another signature: the json package does the same work
    dumps, loads = _checked(_json_codec)
