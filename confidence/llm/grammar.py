"""Make a JSON schema safe for grammar-constrained decoding with a small model.

llama.cpp turns a JSON schema into a GBNF grammar, but two gaps let a small model run on until
``max_tokens``: a plain JSON string may contain newlines and any number of characters, and a
``"type": ["string", "null"]`` union drops the string's ``pattern`` / ``maxLength``. The rewrite
here closes both: unions become ``anyOf`` branches that keep their constraints, and every string
without a pattern gets a bounded, single-line character class. Amounts should be typed as strings
with :data:`confidence.documents.patterns.AMOUNT_PATTERN` so digits cannot run on either.

Examples
--------
>>> grammar_schema({"type": ["string", "null"], "maxLength": 5})
{'anyOf': [{'type': 'string', 'pattern': '^[^"\\\\\\\\\\\\n\\\\r\\\\t]{0,5}$'}, {'type': 'null'}]}
>>> grammar_schema({"type": "string", "pattern": "[0-9]+"})["pattern"]
'^[0-9]+$'
"""

from __future__ import annotations

from typing import Any

_LINE_CHARS = r'[^"\\\n\r\t]'  # one character of a single-line JSON string without escapes


def grammar_schema(schema: dict[str, Any], max_string_length: int = 160) -> dict[str, Any]:
    """Return a copy of ``schema`` whose grammar cannot run on.

    Parameters
    ----------
    schema : dict
        A JSON schema (objects, arrays, strings, numbers, enums, ``anyOf``, type unions).
    max_string_length : int, default 160
        Longest string allowed when the schema gives no ``maxLength`` or ``pattern``.

    Returns
    -------
    dict
        The rewritten schema; the input is not modified.
    """
    if max_string_length < 1:
        raise ValueError(f"max_string_length={max_string_length}; use a positive length")
    return _rewrite(schema, max_string_length)


def _rewrite(node: Any, limit: int) -> Any:
    if isinstance(node, list):
        return [_rewrite(x, limit) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _rewrite(v, limit) for k, v in node.items()}
    for key in ("properties", "$defs", "definitions"):
        if isinstance(node.get(key), dict):
            out[key] = {k: _rewrite(v, limit) for k, v in node[key].items()}
    types = out.get("type")
    if isinstance(types, list) and "enum" not in out and "const" not in out:
        rest = {k: v for k, v in out.items() if k != "type"}
        return {"anyOf": [_rewrite({**_keep_for(t, rest), "type": t}, limit) for t in types]}
    if types == "string" and "enum" not in out and "const" not in out and "format" not in out:
        if "pattern" in out:
            p = out["pattern"]
            out["pattern"] = (
                ("" if p.startswith("^") else "^") + p + ("" if p.endswith("$") else "$")
            )
        else:
            lo = int(out.pop("minLength", 0))
            hi = int(out.pop("maxLength", limit))
            out["pattern"] = f"^{_LINE_CHARS}{{{lo},{hi}}}$"
    return out


_STRING_KEYS = {"pattern", "minLength", "maxLength", "format"}


def _keep_for(t: str, rest: dict[str, Any]) -> dict[str, Any]:
    """Keep string constraints only on the string branch of a union (null has none)."""
    if t == "string":
        return rest
    return {k: v for k, v in rest.items() if k not in _STRING_KEYS}
