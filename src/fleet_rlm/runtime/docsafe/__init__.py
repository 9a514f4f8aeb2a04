"""Untrusted documents to text with bounded resources.

`zipguard` refuses zip bombs from the central directory before any parser runs; `pool` runs the parsers
(`formats`) in a separate, resource-limited process (`worker`) so a bomb or a parser bug that slips through
kills that child, not the server. `limits` holds the bounds and the stable error codes. Every module here
imports only the standard library, `fleet_rlm.errors` and each other: the worker must start light.
"""
