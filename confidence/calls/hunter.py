"""The Hunter call: field-guided extraction that must fill every schema slot.

The Hunter sees the whole schema and the document text and has to put something in every slot;
that pressure is what makes it hallucinate absent fields, and the Mapper's disagreement catches it.

Two modes:

``"free"``
    Free-form JSON values (each a bounded string or null): for strong remote models.
``"grounded"``
    Each value is constrained (JSON-schema ``enum``) to candidates copied from the document:
    the candidate ranker's first ``max_candidates`` in ranker order
    (:meth:`confidence.calls.ranker.CandidateRanker.top_candidates`), listed best-first in the
    prompt too: for small local models, which choose well but spell badly.
    ``order="prior"`` offers the hand-scored prior candidates instead
    (:func:`confidence.calls.candidates.document_candidates`, before the ranker).
"""

from __future__ import annotations

from dataclasses import dataclass

from confidence.calls.candidates import Candidate, document_candidates
from confidence.calls.parsing import readings_from_completion
from confidence.calls.prompts import hunter_messages, hunter_schema, safe_lines
from confidence.calls.ranker import default_ranker
from confidence.documents.lines import Line
from confidence.errors import LLMError
from confidence.llm.base import Completion, LLMClient
from confidence.readings import CallKind, CallResult
from confidence.schema import Schema

HUNTER_MODES = ("free", "grounded")
CANDIDATE_ORDERS = ("ranker", "prior")


@dataclass(frozen=True)
class HunterRequest:
    """Everything needed to make (or replay) one Hunter call over one document."""

    messages: list
    schema: dict
    candidates: dict[str, list[Candidate]] | None
    mode: str


def build_hunter(
    schema: Schema,
    lines: list[Line],
    mode: str = "grounded",
    *,
    max_candidates: int = 4,
    show_document: bool = False,
    list_candidates: bool = True,
    order: str = "ranker",
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
    if order not in CANDIDATE_ORDERS:
        raise ValueError(f"order={order!r}; use one of: {', '.join(CANDIDATE_ORDERS)}")
    lines = safe_lines(lines)  # a page that talks to the model is not shown those lines
    if mode == "free":
        return HunterRequest(hunter_messages(schema, lines), hunter_schema(schema), None, mode)
    if order == "ranker":
        cands = default_ranker().top_candidates(lines, schema, max_candidates)
    else:
        cands = document_candidates(lines, schema, max_candidates=max_candidates)
    values = {k: [c.value for c in v] for k, v in cands.items()}
    msgs = hunter_messages(
        schema, lines, values, show_document=show_document, list_candidates=list_candidates
    )
    return HunterRequest(msgs, hunter_schema(schema, values), cands, mode)


def _result(
    kind: CallKind,
    comp: Completion,
    schema: Schema,
    lines: list[Line],
    request: HunterRequest,
) -> CallResult:
    """Parse one completion; faults become ``status``/``error``, never raises."""
    fields, notes = readings_from_completion(comp, schema, lines, candidates=request.candidates)
    if not fields:
        status = "error"
    elif notes or comp.finish_reason == "length":
        status = "partial"
    else:
        status = "ok"
    if comp.finish_reason == "length" and not any("truncated" in n for n in notes):
        notes.append("reply hit max_tokens")
    return CallResult(
        kind,
        fields,
        mode=request.mode,
        completions=(comp,),
        n_calls=1,
        status=status,
        error="; ".join(notes) or None,
    )


def send_hunter(
    request: HunterRequest,
    schema: Schema,
    lines: list[Line],
    client: LLMClient,
    *,
    n: int = 1,
    kind: CallKind = "hunter",
    temperature: float = 0.0,
    seed: int | None = None,
    max_tokens: int = 512,
    top_logprobs: int = 5,
) -> list[CallResult]:
    """Send a built request for ``n`` completions; one :class:`CallResult` per completion.

    An :class:`~confidence.errors.LLMError` from the client (or no completion) becomes one
    ``status="error"`` result whose ``n_calls`` still counts the ``n`` attempts, so a failed
    call never loses the document.
    """
    try:
        comps = client.chat(
            request.messages,
            schema=request.schema,
            n=n,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            top_logprobs=top_logprobs,
        )
        error = None if comps else "client returned no completion"
    except LLMError as e:
        comps, error = [], str(e)
    if error is not None:
        return [CallResult(kind, {}, mode=request.mode, n_calls=n, status="error", error=error)]
    return [_result(kind, comp, schema, lines, request) for comp in comps]


def run_hunter(
    schema: Schema,
    lines: list[Line],
    client: LLMClient,
    *,
    mode: str = "grounded",
    max_candidates: int = 4,
    show_document: bool = False,
    list_candidates: bool = True,
    max_tokens: int = 512,
    top_logprobs: int = 5,
) -> CallResult:
    """Make the Hunter call (greedy, one completion) and parse it.

    Never raises for a failed call or a bad reply: the fault goes to ``status``/``error``.
    Self-consistency samples are :func:`confidence.calls.samples.self_consistency`.

    Examples
    --------
    >>> from confidence.llm.base import Completion
    >>> from confidence.schema import Field
    >>> class Echo:
    ...     def chat(self, messages, **kw):
    ...         return [Completion('{"total": "9.00"}', None, "echo", {}, 0.0, "stop")]
    >>> lines = [Line(0, "TOTAL 9.00", (0, .5, 1, .52), 1, ())]
    >>> r = run_hunter(Schema("r", (Field("total", "amount"),)), lines, Echo())
    >>> r.status, r.fields["total"].value, r.fields["total"].line
    ('ok', '9.00', 0)
    """
    req = build_hunter(
        schema,
        lines,
        mode,
        max_candidates=max_candidates,
        show_document=show_document,
        list_candidates=list_candidates,
    )
    return send_hunter(
        req, schema, lines, client, max_tokens=max_tokens, top_logprobs=top_logprobs
    )[0]
