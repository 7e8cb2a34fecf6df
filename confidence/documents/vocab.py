"""The label vocabulary: which printed labels name which value, read from one data table.

The table is ``labels.json`` beside this module (its ``about`` entry describes each section);
everything the calls and the features know about labels comes from it:

* *concepts* — what a label means on an invoice or receipt (``doc_id``, ``date_due``,
  ``amount_tax``, ...), multilingual (en/de/fr/es/it/nl/ms). Schema fields are tied to a concept
  by their own name, type and description (:func:`field_concept`), so the table serves any
  schema, not one dataset's. Labels are compared after :func:`~confidence.documents.text.fold_text`,
  so ``USt-IdNr.``, ``N° de facture`` and OCR that lost an accent all match (:func:`find_labels`).
  Concepts that no schema field takes (``other_date``, ``shipping_block``) exist so a
  ``Lieferdatum`` is *recognised* and kept away from ``date_issue``.
* *cues* — phrases printed next to a field's value, keyed by words of the field's name or
  description (:func:`field_cues`, :func:`label_cues`, scored by :func:`cue_score`), with the
  *negative cues* of competing values (``SUB TOTAL`` is not ``total``).
* *label words* — single words that read as labels (:func:`is_label_like`, :func:`label_flags`).
* *qualifiers* — tax qualifiers (``excl. VAT``, ``HT``, ``inkl. MwSt``) that decide what an
  amount label means (:func:`label_concepts`: ``Total (excl. VAT)`` is a net amount).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from importlib.resources import files

from rapidfuzz import fuzz

from confidence.documents.patterns import NUMBER_WORD
from confidence.documents.text import fold, fold_text
from confidence.schema import Field

__all__ = [
    "CUES",
    "LABELS",
    "LABEL_WORDS",
    "NEGATIVE_CUES",
    "TITLES",
    "TITLE_QUALIFIERS",
    "VALUE_CUE_KEYS",
    "concepts_of",
    "cue_score",
    "field_concept",
    "field_cues",
    "field_keys",
    "find_labels",
    "is_label_like",
    "label_concepts",
    "label_cues",
    "label_flags",
]

_TABLE = json.loads(files("confidence.documents").joinpath("labels.json").read_text("utf-8"))

LABELS: dict[str, tuple[str, ...]] = {
    c: tuple(fold_text(p) for p in ps) for c, ps in _TABLE["concepts"].items()
}
"""Concept -> folded label phrases, in table order."""

CUES: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _TABLE["cues"].items()}
"""Cue key (a word of a field name or description) -> lower-case label phrases."""

NEGATIVE_CUES: dict[str, tuple[str, ...]] = {
    k: tuple(v) for k, v in _TABLE["negative_cues"].items()
}
"""Cue key -> labels of competing values."""

VALUE_CUE_KEYS: frozenset[str] = frozenset(_TABLE["value_cue_keys"])
"""Cue keys whose phrases describe the value (a legal suffix), not a label printed beside it."""

TITLES: frozenset[str] = frozenset(_TABLE["titles"])
"""Document titles (``invoice``, ``rechnung``) that are also ``doc_id`` labels."""

TITLE_QUALIFIERS: frozenset[str] = frozenset(_TABLE["title_qualifiers"])
"""Folded words printed before a title as part of it (``tax`` of ``TAX INVOICE``)."""

LABEL_WORDS: frozenset[str] = frozenset(_TABLE["label_words"])
"""Folded words that are labels even without a trailing colon."""

QUALIFIERS: dict[str, tuple[str, ...]] = {
    c: tuple(fold_text(p) for p in ps) for c, ps in _TABLE["qualifiers"].items()
}
"""Amount concept -> folded tax qualifiers (``excl vat``, ``ht``) that decide an amount label."""

_AMOUNTS = frozenset({"amount_net", "amount_gross", "amount_due"})

_ALIASES: dict[str, str] = _TABLE["cue_aliases"]
_STOP = frozenset(_TABLE["description_stop_words"])
_N = {k: frozenset(v) for k, v in _TABLE["field_name_words"].items()}

# Longest phrase first, so "total tva" wins over "total" and "due date" over "date".
_PHRASES = sorted(((p, c) for c, ps in LABELS.items() for p in ps), key=lambda x: -len(x[0]))
_PHRASE_RE = re.compile(
    r"(?<![a-z0-9])(?:" + "|".join(re.escape(p) for p, _ in _PHRASES) + r")(?![a-z0-9])"
)

_QUALIFIER_RE = re.compile(  # longest first, as _PHRASE_RE
    r"(?<![a-z0-9])(?:"
    + "|".join(re.escape(p) for p in sorted(sum(QUALIFIERS.values(), ()), key=len, reverse=True))
    + r")(?![a-z0-9])"
)

# Words that make a total *with* its tax ("Total with VAT", "Total incl. MwSt", "après TVA"): such
# a label stays gross when it names a tax too; without one, "Total VAT" is the tax's total.
_INCLUSION_RE = re.compile(
    r"(?<![a-z])(?:in|inc|incl|inkl|including|inclusive|inklusive|einschl|einschliesslich|included|"
    r"with|mit|avec|after|nach|apres|compris|comprise|ttc|con|incluido|incluso|inclusief|met)"
    r"(?![a-z])"
)

# ----------------------------------------------------------------------------------- concepts


def concepts_of(phrase: str) -> tuple[str, ...]:
    """Concepts a folded label phrase may name, in table order (``vat``: id or amount).

    Examples
    --------
    >>> concepts_of("vat")
    ('tax_id', 'amount_tax')
    """
    return tuple(c for c, ps in LABELS.items() if phrase in ps)


def find_labels(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """Known label phrases in folded ``text``: ``(start, end, concepts)``, longest match wins.

    Examples
    --------
    >>> t = fold_text("Total TVA: 12,00")
    >>> [(t[s:e], c) for s, e, c in find_labels(t)]
    [('total tva', ('amount_tax',))]
    """
    return [(m.start(), m.end(), concepts_of(m.group(0))) for m in _PHRASE_RE.finditer(text)]


def label_concepts(text: str) -> frozenset[str]:
    """Concepts a printed label names, its tax qualifier deciding an amount label.

    The concepts of :func:`find_labels`, except that a label naming an amount (net, gross,
    due) *and* a tax qualifier of the table's ``qualifiers`` means the qualifier's concept:
    ``Total (excl. VAT)`` is a net amount although ``total`` alone reads as gross, and its
    ``VAT`` names no tax amount. A qualifier without an amount word (``inkl. MwSt 1,60``, a
    tax line) changes nothing.

    Examples
    --------
    >>> sorted(label_concepts("Grand total (excluding GST):"))
    ['amount_net']
    >>> sorted(label_concepts("Montant total HT"))
    ['amount_net']
    >>> sorted(label_concepts("Total"))
    ['amount_gross']
    >>> sorted(label_concepts("inkl. MwSt"))
    ['amount_tax']
    """
    folded = fold_text(text)
    spans = find_labels(folded)
    quals = [(m.start(), m.end(), m[0]) for m in _QUALIFIER_RE.finditer(folded)]
    named = {c for _, _, cs in spans for c in cs}
    if (
        not quals
        and {"amount_gross", "amount_tax"} <= named
        and not _INCLUSION_RE.search(folded)
        and not any({"amount_gross", "amount_tax"} <= set(cs) for _, _, cs in spans)
    ):
        # "Total taxes", "Summe MwSt", "GST total": a total *of* the tax, not a total with it
        named.discard("amount_gross")
    # the words of a qualifier ("vat" of "excl. VAT") name nothing of their own
    outside = {
        c for s, e, cs in spans if not any(qs <= s and e <= qe for qs, qe, _ in quals) for c in cs
    }
    if not quals or not outside & _AMOUNTS:
        return frozenset(named)
    qualified = {c for _, _, q in quals for c, ps in QUALIFIERS.items() if q in ps}
    return frozenset((outside - _AMOUNTS) | qualified)


def field_concept(field: Field) -> str | None:
    """The concept a schema field stands for, from its name, type and description (or None).

    Examples
    --------
    >>> field_concept(Field("vendor_tax_id", "id")), field_concept(Field("amount_due", "amount"))
    ('tax_id', 'amount_due')
    >>> field_concept(Field("total", "amount")), field_concept(Field("company", "text"))
    ('amount_gross', 'vendor_name')
    >>> field_concept(Field("amount_prepaid", "amount"))
    'amount_prepaid'
    """
    n = set(re.split(r"[^a-z0-9]+", field.name.lower()))
    d = field.description.lower()
    t = field.type
    if t in ("email", "iban", "currency"):
        return t
    if t == "percent" or "rate" in n:
        return "tax_rate"
    if n & _N["bank_code"]:
        return "bic"
    if (n & _N["tax"] and n & _N["ident"]) or "tax identification" in d or "vat number" in d:
        return "tax_id"
    if t == "id" and n & (_N["customer"] | {"account"}):
        return "customer_id"
    if n & _N["order"] and t != "date":
        return "order_id"
    if n & _N["reference"]:
        return "payment_reference"
    if "terms" in n:
        return "payment_terms"
    if t == "id" and (n & _N["document"] or "invoice number" in d):
        return "doc_id"
    if t == "date":
        return "date_due" if "due" in n else "date_issue"
    if t == "amount":
        if n & _N["prepaid"]:
            return "amount_prepaid"
        if n & _N["due"]:
            return "amount_due"
        if n & _N["tax"]:
            return "amount_tax"
        if n & _N["net"]:
            return "amount_net"
        return "amount_gross"
    side = "customer" if n & _N["customer"] else "vendor" if n & _N["vendor"] else None
    if t in ("text", "address") and side is None and t == "address":
        side = "vendor"  # an unqualified address on an invoice is the issuer's
    if side and t in ("text", "address") and "shipping" not in n:
        return f"{side}_{'name' if t == 'text' else 'address'}"
    return None


# --------------------------------------------------------------------------------------- cues


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9%]+", text.lower()) if w]


def field_keys(field: Field) -> list[str]:
    """Cue keys a field's *name* refers to (description words when the name has none).

    Examples
    --------
    >>> field_keys(Field("invoice_date_due", "date"))
    ['invoice', 'date', 'due']
    >>> field_keys(Field("total_untaxed", "amount"))
    ['total', 'untaxed']
    """
    return list(_field_keys(field))


@lru_cache(maxsize=4096)  # fields are frozen; the calls ask again for every candidate
def _field_keys(field: Field) -> tuple[str, ...]:
    def keys_of(words: list[str]) -> list[str]:
        out = []
        for w in words:
            k = _ALIASES.get(w, w)
            if k in CUES and k not in out:
                out.append(k)
        return out

    keys = keys_of(_words(field.name))
    return tuple(keys or keys_of(_words(field.description)))


@lru_cache(maxsize=4096)
def field_cues(field: Field) -> tuple[str, ...]:
    """Lower-case phrases a document may print as this field's label, or near its value.

    Examples
    --------
    >>> "gst" in field_cues(Field("tax_amount", "amount"))
    True
    """
    cues: list[str] = [field.name.replace("_", " ").lower()]
    for k in field_keys(field):
        cues.extend(CUES[k])
    desc = [w for w in _words(field.description) if w not in _STOP and len(w) > 2]
    cues.extend(desc)
    return tuple(dict.fromkeys(c for c in cues if c))


@lru_cache(maxsize=4096)
def label_cues(field: Field) -> tuple[str, ...]:
    """Phrases that, printed as a label, name this field: its name and label cues only.

    Description words are left out (``"company"`` in "address of the issuing company" must not
    make ``Company No`` a label of the address).

    Examples
    --------
    >>> label_cues(Field("address", "address", "Postal address of the issuing company"))
    ('address', 'adresse')
    """
    cues = [field.name.replace("_", " ").lower()]
    for k in field_keys(field):
        if k not in VALUE_CUE_KEYS:
            cues.extend(CUES[k])
    return tuple(dict.fromkeys(cues))


@lru_cache(maxsize=1 << 16)
def cue_score(text: str, cues: tuple[str, ...]) -> float:
    """How much ``text`` reads like one of ``cues``, in 0-1 (best partial-ratio over cues).

    Short cues must match as whole words so that ``"po"`` does not fire inside ``"deposit"``.

    Examples
    --------
    >>> cue_score("GRAND TOTAL (RM)", ("total", "amount due"))
    1.0
    >>> cue_score("DEPOSIT", ("po",))
    0.0
    """
    low = text.lower()
    words = set(_words(low))
    best = 0.0
    for c in cues:
        if len(c) <= 4:
            if c in words or (not c.isalnum() and c in low):
                return 1.0
            continue
        if c in low:
            return 1.0
        if len(low) >= len(c):  # a short text must not "contain" a longer cue
            best = max(best, fuzz.partial_ratio(c, low) / 100.0)
    return best if best >= 0.8 else 0.0


# -------------------------------------------------------------------------------- label words


def label_flags(
    texts: Sequence[str], keys: Sequence[str], digits: Sequence[str | None]
) -> list[bool]:
    """:func:`is_label_like` of many words, given their keys and digits (``page_keys``).

    On ASCII words the letters and digits are exactly the key's characters, ``fold`` of the
    word is its key, and a word matching the number pattern has no letters, so the test needs
    no second look at the characters.

    Examples
    --------
    >>> from confidence.documents.text import page_keys
    >>> texts = ["Total:", "12.50", "Rechnung", "No."]
    >>> label_flags(texts, *page_keys(texts))
    [True, False, True, True]
    """
    out = []
    for t, k, d in zip(texts, keys, digits, strict=True):
        if d is None:
            out.append(is_label_like(t))
            continue
        nd = len(d)
        nl = len(k) - nd
        out.append(
            nl > 0
            and (
                t.rstrip().endswith(":")
                or k in LABEL_WORDS
                or (nd == 0 and nl >= 3 and nl >= 0.8 * len(t.strip()))
            )
        )
    return out


@lru_cache(maxsize=1 << 17)
def is_label_like(text: str) -> bool:
    """Whether a word reads like a field label (``Total:``, ``Date``, ``Invoice``), not a value.

    Label-like: ends with ``:`` and has letters, or its folded form is in :data:`LABEL_WORDS`, or
    it is mostly letters (>= 3 letters, >= 80 % of its characters). Numbers never are.

    Examples
    --------
    >>> [is_label_like(w) for w in ("Total:", "Date", "12.50", "INV-001", "No.")]
    [True, True, False, False, True]
    """
    t = text.strip()
    if not t or NUMBER_WORD.match(t):
        return False
    letters = sum(ch.isalpha() for ch in t)
    if letters == 0:
        return False
    if t.endswith(":"):
        return True
    if fold(t) in LABEL_WORDS:
        return True
    digits = sum(ch.isdigit() for ch in t)
    return digits == 0 and letters >= 3 and letters >= 0.8 * len(t)
