"""Extra LLM calls for the baselines the fused model is compared against (made only when asked).

* **Self-consistency**: ``k`` extra Hunter samples at ``temperature > 0``; a field's agreement rate
  with the Hunter's greedy value is the baseline's confidence (``RunRecord.samples``).
* **Verbalized confidence**: one extra call asking the model for 0-100 per field
  (``RunRecord.verbalized``).
"""

from __future__ import annotations

from confidence.calls.hunter import build_hunter, send_hunter
from confidence.calls.parsing import readings_from_completion
from confidence.calls.prompts import verbalized_messages, verbalized_schema
from confidence.documents.lines import Line
from confidence.errors import LLMError
from confidence.llm.base import LLMClient
from confidence.readings import CallResult
from confidence.schema import Schema


def self_consistency(
    schema: Schema,
    lines: list[Line],
    client: LLMClient,
    k: int,
    *,
    temperature: float = 0.7,
    mode: str = "grounded",
    seed: int = 1,
    max_candidates: int = 4,
) -> tuple[CallResult, ...]:
    """``k`` Hunter samples at ``temperature`` in one request (``kind="sample"``).

    One call is counted per sample; a failed request is one ``status="error"`` result counting
    ``k`` calls.
    """
    if k < 1:
        raise ValueError(f"k={k}; self-consistency needs at least one sample")
    if temperature <= 0:
        raise ValueError(f"temperature={temperature}; samples need temperature > 0 to differ")
    req = build_hunter(schema, lines, mode, max_candidates=max_candidates)
    return tuple(
        send_hunter(
            req, schema, lines, client, n=k, kind="sample", temperature=temperature, seed=seed
        )
    )


def verbalized_confidence(
    schema: Schema,
    lines: list[Line],
    client: LLMClient,
    values: dict[str, str | None],
    *,
    max_tokens: int = 160,
) -> tuple[dict[str, float] | None, str | None]:
    """Ask the model for a 0-100 confidence per field of ``values``.

    Returns
    -------
    confidences : dict or None
        Field -> confidence in 0-100 (clipped); ``None`` when the call failed or said nothing
        usable.
    error : str or None
        Why the result is missing or partial.
    """
    try:
        comps = client.chat(
            verbalized_messages(schema, lines, values),
            schema=verbalized_schema(schema),
            max_tokens=max_tokens,
            logprobs=False,
        )
    except LLMError as e:
        return None, f"verbalized call failed: {e}"
    if not comps:
        return None, "verbalized call returned no completion"
    readings, notes = readings_from_completion(comps[0], schema, lines)
    out: dict[str, float] = {}
    for name, r in readings.items():
        try:
            out[name] = min(100.0, max(0.0, float(r.value)))
        except (TypeError, ValueError):
            notes.append(f"verbalized {name!r}: {r.value!r} is not a number")
    return (out or None), ("; ".join(notes) or None)
