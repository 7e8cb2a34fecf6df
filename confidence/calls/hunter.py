"""The Hunter call: field-guided extraction that must fill every schema slot.

The Hunter sees the whole schema and the document text and has to put something in every slot;
that pressure is what makes it hallucinate absent fields, and the Mapper's disagreement catches it.

Two modes:

``"free"``
    Free-form JSON values (each a bounded string or null): for strong remote models.
``"grounded"``
    Each value is constrained (JSON-schema ``enum``) to candidates copied from the document
    (:mod:`confidence.calls.candidates`), listed best-first in the prompt too: for small local
    models, which choose well but spell badly.
"""

from __future__ import annotations

from dataclasses import dataclass

from confidence.calls.candidates import Candidate, document_candidates
from confidence.calls.prompts import hunter_messages, hunter_schema, safe_lines
from confidence.calls.readings import readings_from_completion
from confidence.documents.lines import Line
from confidence.errors import LLMError
from confidence.llm.base import Completion, LLMClient
from confidence.readings import CallKind, CallResult
from confidence.schema import Schema

HUNTER_MODES = ("free", "grounded")


@dataclass(frozen=True)
class HunterRequest:
    """Everything needed to make (or replay) one Hunter call over one document."""

    messages: list
    schema: dict
    candidates: dict[str, list[Candidate]] | None


def build_hunter(
    schema: Schema,
    lines: list[Line],
    mode: str = "grounded",
    *,
    max_candidates: int = 4,
    show_document: bool = True,
) -> HunterRequest:
    """Prompt, reply schema and (grounded) candidates of a Hunter call.

    Examples
    --------
    >>> from confidence.schema import Field
    >>> lines = [Line(0, "TOTAL 9.00", (0, .5, 1, .52), 1, ())]
    >>> req = build_hunter(Schema("r", (Field("total", "amount"),)), lines)
    >>> req.schema["properties"]["total"]["enum"]
    ['9.00']
    """
    if mode not in HUNTER_MODES:
        raise ValueError(f"hunter mode {mode!r} is unknown; use one of: {', '.join(HUNTER_MODES)}")
    lines = safe_lines(lines)  # a page that talks to the model is not shown those lines
    if mode == "free":
        return HunterRequest(hunter_messages(schema, lines), hunter_schema(schema), None)
    cands = document_candidates(lines, schema, max_candidates=max_candidates)
    values = {k: [c.value for c in v] for k, v in cands.items()}
    msgs = hunter_messages(schema, lines, values, show_document=show_document)
    return HunterRequest(msgs, hunter_schema(schema, values), cands)


def result_from_completions(
    kind: CallKind,
    completions: list[Completion],
    schema: Schema,
    lines: list[Line],
    mode: str,
    candidates: dict[str, list[Candidate]] | None,
) -> list[CallResult]:
    """One :class:`CallResult` per completion; faults become ``status``/``error``, never raises."""
    out = []
    for comp in completions:
        fields, notes = readings_from_completion(comp, schema, lines, candidates=candidates)
        if not fields:
            status = "error"
        elif notes or comp.finish_reason == "length":
            status = "partial"
        else:
            status = "ok"
        if comp.finish_reason == "length" and not any("truncated" in n for n in notes):
            notes.append("reply hit max_tokens")
        out.append(
            CallResult(
                kind,
                fields,
                mode=mode,
                completions=(comp,),
                n_calls=1,
                status=status,
                error="; ".join(notes) or None,
            )
        )
    return out


def run_hunter(
    schema: Schema,
    lines: list[Line],
    client: LLMClient,
    *,
    mode: str = "grounded",
    n: int = 1,
    temperature: float = 0.0,
    seed: int | None = None,
    max_candidates: int = 4,
    show_document: bool = True,
    max_tokens: int = 512,
    top_logprobs: int = 5,
    kind: CallKind = "hunter",
) -> list[CallResult]:
    """Make one Hunter call (``n`` samples) and parse it.

    An :class:`~confidence.errors.LLMError` from the client becomes one ``status="error"`` result
    (``n_calls`` still counts the attempt), so a failed call never loses the document.
    """
    req = build_hunter(
        schema, lines, mode, max_candidates=max_candidates, show_document=show_document
    )
    try:
        comps = client.chat(
            req.messages,
            schema=req.schema,
            n=n,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            top_logprobs=top_logprobs,
        )
    except LLMError as e:
        return [CallResult(kind, {}, mode=mode, n_calls=n, status="error", error=str(e))]
    if not comps:
        return [
            CallResult(
                kind,
                {},
                mode=mode,
                n_calls=n,
                status="error",
                error="client returned no completion",
            )
        ]
    return result_from_completions(kind, list(comps), schema, lines, mode, req.candidates)
