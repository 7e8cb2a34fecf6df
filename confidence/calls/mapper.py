"""The Mapper call: document-guided, grounded reading of what the page actually labels.

Steps:

1. :func:`~confidence.calls.pairs.find_pairs` finds the document's own label/value pairs from
   layout (colon, right neighbour on the row, line below), without looking at the schema.
2. Each label is mapped to at most one schema field by its cues (field name, description words,
   cue table; :mod:`confidence.documents.vocab`), and its value options are narrowed to strings of
   the field's type (a date inside ``"25/12/2018 8:13 PM"``). Labels that map to nothing are kept
   out; the Mapper misses rather than guesses. Unlabelled issuer names and addresses are reported
   only when the page header makes them unambiguous (legal suffix, postcode).
3. When a client is given, one constrained LLM call reads the pairs' blocks and copies each
   label's value (JSON ``enum`` of its options), so Mapper values carry the model's own token
   log-probabilities too; without a client the layout choice is used (``mode="layout"``).

With ``reader="ranker"`` (the default) steps 1-2 are replaced by the learned candidate ranker
(:mod:`confidence.calls.ranker`), which scores every candidate of every field from the same
page-reading stack and also decides that a field is absent; the LLM call then scores the
ranker's values in the grounded Hunter's prompt (a reply whose every value is fixed: one batched
forward pass with the embedded model) and is kept for its log-probabilities
(``mode="ranker+llm"``).

A degenerate Mapper (most fields taken from one line) is flagged ``status="degenerate"``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from confidence.calls.align import parse_object, tokens_for_span
from confidence.calls.candidates import _amount_value, field_candidates
from confidence.calls.labelled import LabelHit, find_label_hits
from confidence.calls.pairs import Pair, find_pairs
from confidence.calls.prompts import SYSTEM, safe_lines, shared_parts
from confidence.documents.lines import Line
from confidence.documents.patterns import (
    AMOUNT_RE,
    CURRENCY_RE,
    DATE_RE,
    EMAIL_RE,
    GROUPED_ID_RE,
    IBAN_RE,
    ID_RE,
    PERCENT_RE,
    RATE_RE,
    SPACED_ID_RE,
    iban_values,
    repair_digit_run,
)
from confidence.documents.text import fold_text
from confidence.documents.vocab import (
    CUES,
    NEGATIVE_CUES,
    TITLES,
    VALUE_CUE_KEYS,
    cue_score,
    field_concept,
    field_keys,
    label_cues,
)
from confidence.errors import LLMError
from confidence.llm.base import Completion, LLMClient
from confidence.readings import CallResult, FieldReading
from confidence.schema import Field, Schema

_TYPE_RE = {
    "date": DATE_RE,
    "amount": AMOUNT_RE,
    "email": EMAIL_RE,
    "iban": IBAN_RE,
    "percent": PERCENT_RE,
    "currency": CURRENCY_RE,
}
MIN_LABEL_SCORE = 0.8
_NOT_ID = re.compile(rf"{AMOUNT_RE.pattern}|{DATE_RE.pattern}|{RATE_RE.pattern}", re.I)
# A label of one concept may stand for a schema that only has its neighbour (SROIE's "total").
_FALLBACK = {"amount_due": "amount_gross", "amount_gross": "amount_due"}


def label_field_score(field: Field, label: str, schema: Schema | None = None) -> float:
    """How well a printed label names ``field`` (0 = not at all).

    Negative cues subtract; with a schema, a label that also speaks of a competing field's key
    (``Invoice Date`` for ``invoice_number`` when ``invoice_date`` exists) subtracts, and so does
    matching only part of the field's keys (``Invoice No`` for ``invoice_date``).

    Examples
    --------
    >>> total = Field("total", "amount")
    >>> label_field_score(total, "Sub Total") < label_field_score(total, "TOTAL")
    True
    >>> s = Schema("s", (Field("invoice_number", "id"), Field("invoice_date", "date")))
    >>> [round(label_field_score(f, "Invoice No", s), 2) for f in s]
    [1.0, 0.9]
    >>> [round(label_field_score(f, "Invoice Date", s), 2) for f in s]
    [0.7, 1.0]
    """
    own = label_cues(field)
    s = cue_score(label, own)
    keys = field_keys(field)
    for k in keys:
        neg = tuple(n for n in NEGATIVE_CUES.get(k, ()) if n not in own)
        if neg and cue_score(label, neg) > 0:
            s -= 0.7
    if schema is None or s <= 0:
        return s
    matched = [k for k in keys if k not in VALUE_CUE_KEYS and cue_score(label, CUES[k]) > 0]
    if len(keys) > 1:
        s -= 0.2 * (1 - len(matched) / len(keys))
    rivals = {k for f in schema if f.name != field.name for k in field_keys(f)} - set(keys)
    if any(cue_score(label, CUES[k]) > 0 for k in rivals - VALUE_CUE_KEYS):
        s -= 0.3
    return s


def typed_values(field: Field, text: str) -> list[str]:
    """Substrings of ``text`` that can be a value of ``field``'s type (whole text for text types).

    Examples
    --------
    >>> typed_values(Field("date", "date"), "25/12/2018 8:13 PM")
    ['25/12/2018']
    """
    if field.type == "iban":  # also OCR-spaced groups that pass the IBAN checksum
        return iban_values(text)
    pat = _TYPE_RE.get(field.type)
    if pat is not None:
        return [m.group(0).strip() for m in pat.finditer(text)]
    if field.type == "id":
        vals = [m.group(0) for m in ID_RE.finditer(text) if any(c.isdigit() for c in m.group(0))]
        # An amount, rate or date next to an id-like label is not the id.
        vals = [v.strip(":#.") for v in vals if not _NOT_ID.fullmatch(v.strip(":#."))]
        return [repair_digit_run(v) for v in vals if v]
    t = text.strip(" :")
    return [t] if t and _wordy(t) else []


_WORD = re.compile(r"[^\W\d_]{3,}")
_LONG_DIGITS = re.compile(r"\d{4,}")


def _wordy(t: str) -> bool:
    """Text that can be a text value: mostly letters, or a phrase with a word and short numbers.

    A name or address is mostly letters, and "(742014-W)" next to "Company No" is no name; terms
    such as "2% 10, Net 30" are mostly digits and signs but hold a word and only short numbers
    (a phone or registration number has runs of 4 digits or more).

    Examples
    --------
    >>> [_wordy(t) for t in ("Net 30", "2% 10, Net 30", "(742014-W)", "Tel 03-5542 3228")]
    [True, True, False, False]
    """
    n = len(t.replace(" ", ""))
    letters = sum(c.isalpha() for c in t)
    if letters >= 0.5 * n:
        return True
    return letters >= 0.2 * n and bool(_WORD.search(t)) and not _LONG_DIGITS.search(t)


def map_pairs(pairs: list[Pair], schema: Schema) -> dict[str, tuple[Pair, list[tuple[str, int]]]]:
    """Assign each schema field the best-scoring label pair with a value of the field's type.

    Returns field name -> (pair, [(value option, line)]), options best first.
    """
    best: dict[str, tuple[float, Pair, list[tuple[str, int]]]] = {}
    for p in pairs:
        scored = sorted(
            ((label_field_score(f, p.label, schema), f) for f in schema), key=lambda x: -x[0]
        )
        if not scored or scored[0][0] < MIN_LABEL_SCORE:
            continue
        # A label names one field; ties between fields of the same cue strength are ambiguous.
        top = [f for s, f in scored if s == scored[0][0]]
        for f in top[:1] if len(top) == 1 else []:
            opts: list[tuple[str, int]] = []
            for text, li in zip(p.options, p.value_lines, strict=True):
                for v in typed_values(f, text):
                    if '"' in v or "\\" in v:  # unsafe in a llama.cpp enum grammar
                        continue
                    if v not in [o for o, _ in opts]:
                        opts.append((v, li))
            if not opts:
                continue
            s = scored[0][0]
            if f.name not in best or s > best[f.name][0]:
                best[f.name] = (s, p, opts)
    return {k: (p, o) for k, (_, p, o) in best.items()}


def _hit_values(field: Field, concept: str, h: LabelHit) -> list[tuple[str, int]]:
    """Value options of a label hit narrowed to the field's type (blocks: name or address)."""
    if concept in ("customer_block", "vendor_block"):
        block = [(t, li) for t, li in h.options if not re.search(r"@|\btel\b|\d{5,}$", t, re.I)]
        if field.type == "text":
            return [(t, li) for t, li in block[:1] if typed_values(field, t)]
        rest = block[1:5]
        return [(", ".join(t for t, _ in rest), rest[0][1])] if rest else []
    out: list[tuple[str, int]] = []
    texts = [(h.label, h.line), *h.options] if field.type == "percent" else list(h.options)
    if concept == "doc_id" and fold_text(h.label) in TITLES:
        # A bare "INVOICE"/"Rechnung" is usually the title: only a value on its own line counts.
        texts = [(t, li) for t, li in texts if li == h.line]
    for text, li in texts:
        vals = typed_values(field, text)
        if field.type == "id" and concept in ("tax_id", "payment_reference"):
            # Tax ids and references are often printed in groups: "FR 65 501744252".
            m = SPACED_ID_RE.match(text.strip()) or GROUPED_ID_RE.match(text)
            if m and any(c.isdigit() for c in m.group(0)):
                vals = [repair_digit_run(m.group(0).strip()), *vals]
        out.extend((v, li) for v in vals if '"' not in v and "\\" not in v)
        if out and field.type not in ("percent",):
            break
    return list(dict.fromkeys(out))


def map_hits(hits: list[LabelHit], schema: Schema) -> dict[str, tuple[Pair, list[tuple[str, int]]]]:
    """Assign schema fields their known-vocabulary labels (:mod:`confidence.documents.vocab`).

    A field takes the label whose concept is its own (``Fälligkeitsdatum`` -> the due date),
    preferring labels that name it first, then the earliest (the largest for totals). Returns
    field name -> (pair, [(value option, line)]) like :func:`map_pairs`.
    """
    concepts = {f.name: field_concept(f) for f in schema}
    present = set(concepts.values())
    out: dict[str, tuple[Pair, list[tuple[str, int]]]] = {}
    for f in schema:
        c = concepts[f.name]
        if c is None:
            continue
        want = {c}
        if c in ("customer_name", "customer_address", "vendor_name", "vendor_address"):
            want.add(c.split("_")[0] + "_block")
        if c == "tax_rate":
            want.add("amount_tax")
        alt = _FALLBACK.get(c)
        if alt and alt not in present:
            want.add(alt)
        best = None
        for h in hits:
            hit_c = [k for k in h.concepts if k in want]
            if not hit_c:
                continue
            opts = _hit_values(f, hit_c[0], h)
            if not opts:
                continue
            rank = (h.concepts[0] in want, -len(h.concepts))
            if f.type == "amount":
                rank = (*rank, _amount_value(opts[0][0]))
            if best is None or rank > best[0]:
                best = (rank, h, opts)
        if best is not None:
            _, h, opts = best
            out[f.name] = (
                Pair(h.label, tuple(o for o, _ in opts), h.line, tuple(li for _, li in opts)),
                opts,
            )
    return out


def _unlabelled(schema: Schema, lines: list[Line], taken: set[str]) -> dict[str, tuple[str, int]]:
    """Values the page states unambiguously without a label: the only date, issuer name, address."""
    out = {}
    dates = {m.group(0) for ln in lines for m in DATE_RE.finditer(ln.text)}
    date_fields = [f for f in schema if f.type == "date"]
    if len(dates) == 1 and len(date_fields) == 1 and date_fields[0].name not in taken:
        # One date printed and one date asked for: the page is unambiguous without a label.
        d = dates.pop()
        out[date_fields[0].name] = (d, next(ln.index for ln in lines if d in ln.text))
    money = {"€": "EUR", "$": "USD", "£": "GBP", "RM": "MYR"}
    found = [(m.group(0), ln.index) for ln in lines for m in CURRENCY_RE.finditer(ln.text)]
    cur = [f for f in schema if f.type == "currency" and f.name not in taken]
    if cur and len({money.get(v, v) for v, _ in found}) == 1:
        # Every amount carries the same currency: the page states it without a label.
        out[cur[0].name] = found[0]
    for f in schema:
        if f.name in taken or f.type not in ("text", "address") or "customer" in field_keys(f):
            continue
        if field_concept(f) not in (None, "vendor_name", "vendor_address"):
            continue  # payment terms are a labelled value, not a page header
        cands = field_candidates(f, lines, schema, max_candidates=2)
        strong = 1.5 if f.type == "text" else 2.5
        if cands and cands[0].score >= strong:
            out[f.name] = (cands[0].value, cands[0].line)
    return out


def mapper_messages(schema: Schema, items: list[str], lines: list[Line]) -> list:
    """Messages of the Mapper's copy call: the shared field list and document, then the labels.

    The opening is the Hunter's (:func:`~confidence.calls.prompts.shared_parts`), so a client
    that keeps its evaluated prefix reads only the label list here.

    Examples
    --------
    >>> s = Schema("r", (Field("total", "amount"),))
    >>> lines = [Line(0, "TOTAL 9.00", (0, 0, 1, 1), 1, ())]
    >>> print(mapper_messages(s, ["1. TOTAL"], lines)[1]["content"].split(chr(10) * 2)[-1])
    Labels printed in the document:
    1. TOTAL
    For each label, copy the value printed with it. Reply with a JSON object.
    """
    labels = (
        "Labels printed in the document:\n"
        + "\n".join(items)
        + "\nFor each label, copy the value printed with it. Reply with a JSON object."
    )
    user = "\n\n".join([*shared_parts(schema, lines), labels])
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def degenerate_reason(fields: dict[str, FieldReading]) -> str | None:
    """Why a Mapper output looks degenerate (most fields from one line), or None.

    Examples
    --------
    >>> r = {k: FieldReading("x", line=3) for k in "abc"}
    >>> degenerate_reason(r)
    '3 of 3 mapped fields come from line 3'
    """
    lines = [r.line for r in fields.values() if r.value is not None and r.line is not None]
    if len(lines) < 3:
        return None
    line, count = Counter(lines).most_common(1)[0]
    if count > len(lines) / 2:
        return f"{count} of {len(lines)} mapped fields come from line {line}"
    return None


MAPPER_READERS = ("ranker", "layout")
"""``"ranker"``: the learned candidate ranker's reading (:mod:`confidence.calls.ranker`);
``"layout"``: the label/value pairs of the page mapped by their cues (before the ranker)."""


def _layout_mapped(schema: Schema, safe: list[Line]):
    mapped = map_hits(find_label_hits(safe), schema)
    unknown = Schema(schema.name, tuple(f for f in schema if field_concept(f) is None))
    if len(unknown.fields):
        mapped.update(map_pairs(find_pairs(safe), unknown))
    return mapped


def _ranker_mapped(schema: Schema, safe: list[Line], top_k: int):
    """Field -> (pair, options) of the ranker's reading: the top candidate first, then the
    next ``top_k - 1`` as the LLM's alternatives; fields found absent are left out. Also the
    ranker's probability of every field's choice (of "absent" for the fields left out)."""
    from confidence.calls.ranker import default_ranker  # the ranker's features use this module

    mapped: dict[str, tuple[Pair, list[tuple[str, int]]]] = {}
    ranker = default_ranker()
    reading = ranker.rank(safe, schema)
    chosen = ranker.read(safe, schema)  # amounts and dates chosen jointly
    probs = {f.name: chosen[f.name].prob for f in schema}
    for f in schema:
        top = chosen[f.name]
        if top.value is None:
            continue
        ranked = [top, *(c for c in reading[f.name] if c.value != top.value)]
        opts = [(c.value, c.line) for c in ranked if c.value is not None][:top_k]
        opts = [(v, li) for v, li in opts if li is not None]
        label = top.label or f.name.replace("_", " ")
        mapped[f.name] = (
            Pair(label, tuple(v for v, _ in opts), opts[0][1], tuple(li for _, li in opts)),
            opts,
        )
    return mapped, probs


def run_mapper(
    schema: Schema,
    lines: list[Line],
    client: LLMClient | None = None,
    *,
    reader: str = "ranker",
    top_k: int = 3,
    max_tokens: int | None = None,
    top_logprobs: int = 5,
    messages: list | None = None,
    hunter: CallResult | None = None,
) -> CallResult:
    """Read the document's labelled values and map them to schema fields.

    Parameters
    ----------
    reader : {"ranker", "layout"}
        ``"ranker"`` reports the candidate ranker's top value of every field (nothing for a
        field it finds absent); the LLM call, when a client is given, *scores* those values:
        its reply schema allows exactly the ranker's value for each field, so a client that
        forces fixed tokens (:class:`~confidence.llm.local.LocalLlamaClient`) evaluates the
        whole reply in one batched forward pass, without sampling, and every value carries the
        model's log-probabilities of its tokens. The prompt is the grounded Hunter's
        (``messages``), so the client reuses its evaluated prefix; ``top_k`` is the number of
        ranker options counted in ``n_candidates``.
        ``"layout"`` is the pre-ranker reading: the page's labels mapped by their cues, the
        LLM's choice among each label's options reported (the remote-model path).
    messages : list of dict, optional
        Prompt of the ``"ranker"`` scoring call; default the grounded Hunter's prompt for this
        page (:func:`~confidence.calls.hunter.build_hunter`), which
        :func:`~confidence.calls.extract.extract_document` passes in.
    max_tokens : int, optional
        Reply budget of the call; default 384 for the label call, 512 for the scoring call
        (its keys are the field names, as in the Hunter's reply).
    hunter : CallResult, optional
        The grounded Hunter's result on that same prompt (``"ranker"`` only). Where the Hunter
        chose the ranker's value, the Mapper's reading takes the Hunter's value tokens (the
        model's log-probabilities of that value in that prompt) and the scoring call leaves the
        field out; with every value chosen by the Hunter no call is made (``n_calls=0``, the
        Hunter's completion listed as the source).

    Never raises for a bad reply or a failed call: the layout reading is kept and the fault
    goes to ``status``/``error``.
    """
    if reader not in MAPPER_READERS:
        raise ValueError(f"reader={reader!r}; use one of: {', '.join(MAPPER_READERS)}")
    safe = safe_lines(lines)
    by_index = {ln.index: ln for ln in lines}  # lines may be a filtered list: index by .index
    probs: dict[str, float] = {}
    if reader == "ranker":
        mapped, probs = _ranker_mapped(schema, safe, top_k)
    else:
        mapped = _layout_mapped(schema, safe)
    fields: dict[str, FieldReading] = {}
    items = [(f"{i + 1}. {p.label}", p) for i, (p, _) in enumerate(mapped.values())]
    key_of = dict(zip(mapped, (k for k, _ in items), strict=True))
    for name, (p, opts) in mapped.items():
        v, li = opts[0]
        fields[name] = FieldReading(
            v,
            None,
            raw=by_index[li].text,
            label=p.label,
            line=li,
            n_candidates=len(opts),
            prob=probs.get(name),
        )
    for name, prob in probs.items():  # the ranker found these absent, with this probability
        if name not in fields:
            fields[name] = FieldReading(None, (), prob=prob)
    if reader == "layout":
        for name, (v, li) in _unlabelled(schema, safe, set(mapped)).items():
            fields[name] = FieldReading(v, None, raw=by_index[li].text, label=None, line=li)
    mode, comps, n_calls, errors = reader, (), 0, []
    if client is not None and mapped and reader == "ranker":
        mode = "ranker+llm"
        if messages is None:
            messages = _hunter_prompt(schema, lines)
        fields, comps, n_calls, errors = _score_ranker(
            mapped, fields, by_index, client, messages, hunter, max_tokens or 512, top_logprobs
        )
    elif client is not None and mapped:  # choose among each label's options
        mode, n_calls = "layout+llm", 1
        enums = {key_of[n]: [o for o, _ in opts] for n, (_, opts) in mapped.items()}
        messages = mapper_messages(schema, [k for k, _ in items], safe)
        comp, err = _call(client, messages, enums, max_tokens or 384, top_logprobs)
        if comp is not None:
            comps = (comp,)
            fields, errs = _apply_reply(comp, mapped, key_of, fields, by_index)
            errors.extend(errs)
        else:
            errors.append(err)
    status = "ok" if not errors else "partial"
    why = degenerate_reason(fields)
    if why:
        status, errors = "degenerate", [why, *errors]
    return CallResult(
        "mapper",
        fields,
        mode=mode,
        completions=comps,
        n_calls=n_calls,
        status=status,
        error="; ".join(errors) or None,
    )


def _call(client: LLMClient, messages: list, enums: dict, max_tokens: int, top_logprobs: int):
    """One constrained call whose reply is an object of ``enum`` slots: (completion, None) or
    (None, why it failed)."""
    reply_schema = {
        "type": "object",
        "properties": {k: {"enum": v} for k, v in enums.items()},
        "required": list(enums),
        "additionalProperties": False,
    }
    try:
        comps = client.chat(
            messages, schema=reply_schema, max_tokens=max_tokens, top_logprobs=top_logprobs
        )
    except LLMError as e:
        return None, f"LLM call failed, layout values kept: {e}"
    if not comps:
        return None, "client returned no completion; layout values kept"
    return comps[0], None


def _score_ranker(mapped, fields, by_index, client, messages, hunter, max_tokens, top_logprobs):
    """The ranker's values with the model's log-probabilities: fields, completions, calls, errors.

    A field whose value the Hunter chose too (``hunter``, made on the same prompt) takes the
    Hunter's value tokens; the others are scored by one call whose reply allows exactly the
    ranker's value for each of them.
    """
    fields, comps, reused = dict(fields), [], set()
    if hunter is not None and hunter.completions:
        for name, (_, opts) in mapped.items():
            h = hunter.fields.get(name)
            if h is not None and h.tokens and h.value == opts[0][0]:
                fields[name] = replace(fields[name], tokens=h.tokens)
                reused.add(name)
        if reused:
            comps.append(hunter.completions[0])
    todo = {n: m for n, m in mapped.items() if n not in reused}
    if not todo:
        return fields, tuple(comps), 0, []
    comp, err = _call(
        client,
        messages,
        {n: [opts[0][0]] for n, (_, opts) in todo.items()},
        max_tokens,
        top_logprobs,
    )
    if comp is None:
        return fields, tuple(comps), 1, [err]
    fields, errs = _apply_reply(comp, todo, {n: n for n in todo}, fields, by_index)
    return fields, (*comps, comp), 1, errs


def _hunter_prompt(schema: Schema, lines: list[Line]) -> list:
    """The grounded Hunter's prompt for this page (the ranker's scoring call shares it)."""
    from confidence.calls.hunter import build_hunter  # the Hunter's ranker imports this module

    return build_hunter(schema, lines).messages


def _apply_reply(comp: Completion, mapped, key_of, fields, lines):
    """Fields with the reply's values and the tokens that spell them."""
    parsed = parse_object(comp.text)
    errs = [parsed.error] if parsed.error else []
    spans = {s.key: s for s in parsed.spans}
    out = dict(fields)
    for name, (p, opts) in mapped.items():
        sp = spans.get(key_of[name])
        values = {o: li for o, li in opts}
        if sp is None or not isinstance(sp.value, str) or sp.value not in values:
            if sp is not None:
                errs.append(f"reply value for {p.label!r} is not one of its options")
            continue
        li = values[sp.value]
        before = out.get(name)
        out[name] = FieldReading(
            sp.value,
            tokens_for_span(comp.tokens, comp.text, sp.start, sp.end),
            raw=lines[li].text,
            label=p.label,
            line=li,
            n_candidates=len(opts),
            # the reader's probability belongs to its value, kept when the reply repeats it
            prob=before.prob if before is not None and before.value == sp.value else None,
        )
    missing = [key_of[n] for n in mapped if key_of[n] not in spans]
    if missing and not parsed.error:
        errs.append(f"reply left out label(s) {', '.join(missing)}")
    return out, errs
