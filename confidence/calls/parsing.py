"""Turn a JSON-object completion into per-field :class:`~confidence.readings.FieldReading`.

Shared by the Hunter, its self-consistency samples and the verbalized call. Faults are reported,
never raised: unknown keys are dropped, keys that differ from a field name only in case or
separators are mapped to it, overlong values are refused, and a truncated reply keeps the pairs it
completed. The caller turns the notes into the call's ``status``/``error``.
"""

from __future__ import annotations

import re

from confidence.calls.align import parse_object, tokens_for_span
from confidence.calls.prompts import MAX_VALUE_CHARS
from confidence.documents.lines import Line
from confidence.llm.base import Completion
from confidence.readings import FieldReading
from confidence.schema import Schema


def _norm_key(k: str) -> str:
    return re.sub(r"[^a-z0-9]", "", k.lower())


def find_line(value: str, lines: list[Line]) -> int | None:
    """Index of the first line containing ``value`` (case- and space-insensitive), if any.

    Examples
    --------
    >>> box = (0, 0, 1, 1)
    >>> ls = [Line(0, "CASH 10.00", box, 1, ()), Line(1, "TOTAL 9.00", box, 1, ())]
    >>> find_line("9.00", ls)
    1
    """
    v = " ".join(value.lower().split())
    if not v:
        return None
    for ln in lines:
        if v in " ".join(ln.text.lower().split()):
            return ln.index
    first = v.split(" ")[0]  # multi-line values (addresses): the line where they start
    if len(first) >= 4:
        for ln in lines:
            if ln.text.lower().startswith(first):
                return ln.index
    return None


def readings_from_completion(
    completion: Completion,
    schema: Schema,
    lines: list[Line],
    *,
    candidates: dict[str, list] | None = None,
) -> tuple[dict[str, FieldReading], list[str]]:
    """Parse one completion into readings for the schema's fields.

    Parameters
    ----------
    completion : Completion
    schema : Schema
    lines : list of Line
        The document lines (to locate each value's line).
    candidates : dict or None
        Field -> list of :class:`~confidence.calls.candidates.Candidate` offered in grounded mode.

    Returns
    -------
    readings : dict
        Field name -> FieldReading for every field the reply reported.
    notes : list of str
        Problems found (empty when the reply was clean).
    """
    parsed = parse_object(completion.text)
    notes: list[str] = []
    if parsed.error:
        notes.append(parsed.error)
    by_norm = {_norm_key(n): n for n in schema.names}
    out: dict[str, FieldReading] = {}
    for sp in parsed.spans:
        name = sp.key if sp.key in schema else by_norm.get(_norm_key(sp.key))
        if name is None:
            notes.append(f"unknown field {sp.key!r} dropped")
            continue
        if name in out:
            notes.append(f"field {name!r} given twice; first kept")
            continue
        value = sp.value
        if isinstance(value, bool) or isinstance(value, list | dict):
            notes.append(f"field {name!r}: non-scalar value {str(value)[:40]!r} treated as absent")
            value = None
        elif value is not None:
            value = str(value).strip()
            if not value:
                value = None
        limit = MAX_VALUE_CHARS.get(schema[name].type, 200)
        if value is not None and len(value) > limit:
            notes.append(
                f"field {name!r}: value of {len(value)} characters is longer than a "
                f"{schema[name].type} can be ({limit}); treated as absent"
            )
            out[name] = FieldReading(None, (), raw=value[:500])
            continue
        toks = (
            ()
            if value is None
            else tokens_for_span(completion.tokens, completion.text, sp.start, sp.end)
        )
        if value is None and completion.tokens is None:
            toks = None
        line = n_cand = None
        raw = None
        if candidates is not None:
            cands = candidates.get(name, [])
            n_cand = len(cands)
            match = next((c for c in cands if c.value == value), None)
            if match is not None:
                line = match.line
        if value is not None and line is None:
            line = find_line(value, lines)
        if line is not None and 0 <= line < len(lines):
            raw = lines[line].text
        out[name] = FieldReading(value, toks, raw=raw, line=line, n_candidates=n_cand)
    missing = [n for n in schema.names if n not in out]
    if missing and not parsed.error:
        notes.append(f"reply left out field(s) {', '.join(missing)}")
    if (
        completion.tokens is not None
        and "".join(t.token for t in completion.tokens) != completion.text
    ):
        notes.append("completion tokens do not spell the text; value tokens not aligned")
    return out, notes
