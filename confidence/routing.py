"""Routing: accept or review each field, and say why in a few words.

A field is **accepted** when its calibrated confidence reaches its threshold (looked up with
:meth:`confidence.calibration.ThresholdSelector.lookup_many`, which owns the fallback
(field, group) -> field -> type -> global, the group being the document's under the thresholds'
grouping, :meth:`confidence.engine.ConfidenceEngine.groups_of`), else sent to **review**. A
document goes **straight through** when every field of it is accepted.

Two rules override the threshold (:func:`overrides`): an **empty value** is never accepted
unless absence was certified for that field (a threshold certified over values says nothing
about an empty answer, which is wrong whenever the field is on the page), and with
``on_shift="review"`` the fields of an **out-of-domain** document (:mod:`confidence.domain`),
or of every document of a shifted batch, go to review.

Reasons come from the fusion model's per-feature contributions (LightGBM ``pred_contrib``, the
same values as ``shap.TreeExplainer``): for a reviewed field the 1-3 features that pulled its
score down the most, for an accepted field the ones that pushed it up, each turned into a short
phrase through :data:`PHRASES` (first matching name prefix wins). Binary features speak about the
state they are in (``agree_equal = 0`` -> "Hunter and Mapper disagree"), missing ones (NaN) about
what is missing. Contributions smaller than ``min_contribution`` (log-odds) are not reasons.

Image-quality features (``q_*``) are measured on every page, a rendered digital PDF page too, but
words like "JPEG artefacts" or "blurry region" only make sense for a page that is an image: a row
whose value sits on a digital PDF page (``ocr_source_pdf == 1``, the page of the reported value)
never cites them, in either direction; its other features give the reasons.

Instruction-like text (a prompt injection, see :mod:`confidence.documents.instructions`) near
a value overrides the score: :func:`guard_instructions` sends the field to review whatever its
confidence, with the reason first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Literal

import numpy as np

__all__ = [
    "ACCEPT",
    "INSTRUCTION_REASONS",
    "PHRASES",
    "REVIEW",
    "Decision",
    "decide",
    "guard_instructions",
    "overrides",
    "phrase",
    "reasons",
    "straight_through",
    "summary",
]

Decision = Literal["accept", "review"]
ACCEPT: Decision = "accept"
REVIEW: Decision = "review"

# (prefix, phrase when the feature lowers confidence, phrase when it raises it). First match wins,
# so specific names come before their family prefix.
PHRASES: tuple[tuple[str, str, str], ...] = (
    ("agree_hunter_only", "Mapper did not find the field", "Hunter and Mapper agree"),
    ("agree_mapper_only", "only the Mapper found a value", "Hunter and Mapper agree"),
    ("agree_both_empty", "neither call found a value", "both calls find the field absent"),
    ("agree_both_present", "Hunter and Mapper disagree", "both calls found a value"),
    ("agree_same_place", "Hunter and Mapper read different places", "both read the same place"),
    ("agree_place_distance", "Hunter and Mapper read different places", "both read the same place"),
    ("agree_mapper_has_label", "no label next to the value", "value sits next to its label"),
    ("agree_", "Hunter and Mapper disagree", "Hunter and Mapper agree"),
    ("cons_h", "amounts or dates do not add up", "amounts and dates add up"),
    ("cons_m", "the Mapper's amounts or dates do not add up", "the Mapper's amounts add up"),
    ("cons_shared", "the same value was read for another field", "value read for this field only"),
    ("cons_part_of", "the value is part of another field's value", "value of this field only"),
    ("rd_m_prob", "the layout reader was unsure of its choice", "the layout reader is sure of it"),
    ("val_valid", "not a well-formed value of its type", "well-formed value of its type"),
    ("val_open_end", "ends in a comma or connector: it may be cut short", "ends as a value ends"),
    ("kind_other", "reads like a heading or label, not a value", "reads like a field value"),
    ("kind_own", "does not read like a value of this field", "reads like a value of this field"),
    ("val_", "unusual shape for its type", "typical shape for its type"),
    ("lp_h_n_tokens", "unusual value length", "typical value length"),
    ("lp_m_n_tokens", "unusual value length", "typical value length"),
    ("lp_h_", "low token probability", "high token probability"),
    ("lp_m_", "low token probability (Mapper)", "high token probability (Mapper)"),
    ("ocr_h_n_occurrences", "value appears several times on the page", "value appears once"),
    ("ocr_m_n_occurrences", "value appears several times on the page", "value appears once"),
    ("ocr_h_conf", "low OCR confidence on the value", "clear OCR reading of the value"),
    ("ocr_m_conf", "low OCR confidence on the value", "clear OCR reading of the value"),
    ("ocr_h_", "value not found on the page", "value found on the page"),
    ("ocr_m_", "Mapper's value not found on the page", "value found on the page"),
    ("ocr_label_conf", "low OCR confidence on the label", "clear label"),
    ("ocr_source_pdf", "scanned page", "digital PDF text"),
    ("ocr_page_conf", "low OCR confidence on the page", "clear OCR reading of the page"),
    ("ocr_doc_words", "unusual amount of text", "typical amount of text"),
    ("ocr_value_chars", "unusual value length", "typical value length"),
    ("ocr_page_restored", "faint print, read on a restored image", "print read as it lies"),
    (
        "ocr_alone_agree",
        "reads otherwise when read again alone",
        "reads the same when read again alone",
    ),
    (
        "ocr_alone_alt",
        "read again alone, it reads as another value of its type",
        "read again alone, it reads as no other value",
    ),
    ("ocr_", "weak OCR evidence", "strong OCR evidence"),
    ("q_local_", "blurry region", "sharp region"),
    ("q_sharpness", "blurry page", "sharp page"),
    ("q_noise", "noisy scan", "clean scan"),
    ("q_skew", "skewed scan", "straight scan"),
    ("q_effective_resolution", "small or low-resolution print", "legible print size"),
    ("q_blockiness", "JPEG artefacts", "no compression artefacts"),
    ("q_contrast", "low contrast", "good contrast"),
    ("q_brightness", "poor exposure", "good exposure"),
    ("q_ink_ratio", "unusual ink density", "normal ink density"),
    ("q_", "poor image quality", "good image quality"),
    ("lay_label", "far from its label", "next to its label"),
    ("lay_in_table", "inside a table", "outside tables"),
    ("lay_font", "unusual print size", "typical print size"),
    ("lay_", "unusual position on the page", "typical position on the page"),
    ("type_", "this field type is often wrong", "this field type is usually right"),
    ("page_sum", "does not add up with the page's amounts", "adds up with the page's amounts"),
    ("edge_", "its block may go on above or below it", "its block ends where it ends"),
    ("lbl_", "the label beside it names another field", "the label beside it names this field"),
)
"""Name prefix -> (lowers confidence, raises confidence) phrases."""

# Binary features whose state, not sign, decides the words: (name, value) -> (lowers, raises).
_STATES: dict[tuple[str, float], tuple[str, str]] = {
    ("agree_equal", 0.0): ("Hunter and Mapper disagree", "Hunter and Mapper disagree"),
    ("agree_equal", 1.0): ("Hunter and Mapper agree", "Hunter and Mapper agree"),
    ("agree_hunter_only", 0.0): ("", ""),
    ("agree_mapper_only", 0.0): ("", ""),
    ("agree_both_empty", 0.0): ("", ""),
    ("agree_both_present", 0.0): ("Hunter and Mapper disagree", ""),
    ("agree_same_place", 0.0): ("Hunter and Mapper read different places", ""),
    ("agree_same_place", 1.0): ("", "both read the same place"),
    ("ocr_h_found", 0.0): ("value not found on the page", ""),
    ("ocr_h_exact", 0.0): ("value not found exactly on the page", ""),
    ("ocr_m_found", 0.0): ("Mapper's value not found on the page", ""),
    ("ocr_source_pdf", 1.0): ("", "digital PDF text"),
    ("ocr_source_pdf", 0.0): ("scanned page", ""),
    ("cons_h", 0.0): ("amounts or dates do not add up", ""),
    ("cons_h", 1.0): ("", "amounts and dates add up"),
    ("cons_shared", 1.0): ("the same value was read for another field", ""),
    ("cons_shared", 0.0): ("", ""),
    ("cons_part_of", 1.0): ("the value is part of another field's value", ""),
    ("cons_part_of", 0.0): ("", ""),
    ("val_valid", 0.0): ("not a well-formed value of its type", ""),
    ("val_valid", 1.0): ("", "well-formed value of its type"),
    ("val_open_end", 1.0): ("ends in a comma or connector: it may be cut short", ""),
    ("val_open_end", 0.0): ("", ""),
    ("ocr_alone_alt", 1.0): ("read again alone, it reads as another value of its type", ""),
    ("ocr_alone_alt", 0.0): ("", ""),  # ocr_alone_agree already says it read the same
    ("lay_in_table", 1.0): ("inside a table", ""),
    ("lay_in_table", 0.0): ("", "outside tables"),
    ("page_sum", 0.0): ("does not add up with the page's amounts", ""),
    ("page_sum", 1.0): ("", "adds up with the page's amounts"),
}

_MISSING = (
    ("lp_", "no token probabilities"),
    ("ocr_alone_agree", ""),  # most values have no digit to read again: nothing to say
    ("ocr_alone_alt", ""),
    ("page_sum", ""),  # only totals, nets and taxes have a role to add up in
    ("edge_", ""),  # names and addresses only, and nothing printed past an edge is no news
    ("lbl_", ""),  # a field of no known concept: its label says nothing either way
    ("ocr_", "value not located on the page"),
    ("q_local", "value not located on the page"),
    ("q_", "no image-quality measurements"),
    ("lay_", "value not located on the page"),
    ("agree_", "only one call gave a value"),
)


def phrase(name: str, value: float, contribution: float) -> str:
    """Words for one feature contribution ("" when the feature should not be cited).

    Examples
    --------
    >>> phrase("agree_equal", 0.0, -1.2)
    'Hunter and Mapper disagree'
    >>> phrase("q_local_sharpness_log", 2.1, -0.4)
    'blurry region'
    >>> phrase("lp_h_mean", float("nan"), -0.3)
    'no token probabilities'
    """
    if value != value:  # NaN: the contribution is about the signal being missing
        for prefix, words in _MISSING:
            if name.startswith(prefix):
                return words if contribution < 0 else ""
        return ""
    state = _STATES.get((name, float(value)))
    if state is not None:
        return state[0] if contribution < 0 else state[1]
    low, high = _family(name)
    return low if contribution < 0 else high


@lru_cache(maxsize=1024)
def _family(name: str) -> tuple[str, str]:
    for prefix, low, high in PHRASES:
        if name.startswith(prefix):
            return low, high
    return name.replace("_", " "), name.replace("_", " ")


def decide(confidence, thresholds) -> np.ndarray:
    """``"accept"`` where ``confidence >= threshold``, else ``"review"`` (NaN never accepts).

    Examples
    --------
    >>> decide([0.99, 0.5, float("nan")], [0.9, 0.9, 0.0]).tolist()
    ['accept', 'review', 'review']
    """
    c = np.asarray(confidence, dtype=float)
    t = np.asarray(thresholds, dtype=float)
    with np.errstate(invalid="ignore"):
        ok = c >= t
    return np.where(ok, ACCEPT, REVIEW).astype(object)


MALFORMED = "not a well-formed value of its type (an impossible date, a failed IBAN check)"
EMPTY_UNCERTIFIED = "empty value: absence is not certified for this field"
OUT_OF_DOMAIN = "document unlike the calibration documents (novelty p={p:.3g})"
SHIFTED_BATCH = "batch unlike the calibration documents (shift p={p:.3g})"


def overrides(
    values: Sequence[str | None],
    fields: Sequence[str],
    *,
    absence_certified: Iterable[str] = (),
    novelty_p: Sequence[float | None] | None = None,
    out_of_domain: Sequence[bool | None] | None = None,
    batch_shift_p: float | None = None,
    batch_shifted: bool = False,
    on_shift: str = "warn",
    malformed: Sequence[bool] | None = None,
) -> list[str | None]:
    """Per row: the reason it must go to review whatever its confidence, or None.

    Parameters
    ----------
    values, fields : sequences
        The reported values (None or blank = empty) and their field names.
    absence_certified : iterable of str
        Fields for which an empty value may be accepted on its confidence.
    novelty_p, out_of_domain : sequences, optional
        Per row, its document's domain check (:class:`confidence.domain.DomainCheck`).
    batch_shift_p, batch_shifted : float, bool
        The batch verdict.
    on_shift : {"warn", "review"}
        ``"review"`` sends out-of-domain documents (all documents when the batch is shifted)
        to review; ``"warn"`` only reports.
    malformed : sequence of bool, optional
        Per row, whether the value breaks its type's syntax
        (:func:`confidence.features.validity.is_valid` is False): such a value is wrong or
        misread, so it is never accepted.

    Examples
    --------
    >>> overrides(["9.00", "", None], ["total", "date", "currency"],
    ...           absence_certified=["currency"])
    [None, 'empty value: absence is not certified for this field', None]
    >>> overrides(["9.00", "x"], ["total", "id"], novelty_p=[0.001, 0.4],
    ...           out_of_domain=[True, False], on_shift="review")
    ['document unlike the calibration documents (novelty p=0.001)', None]
    >>> overrides(["44/04/2018"], ["date"], malformed=[True])[0][:26]
    'not a well-formed value of'
    """
    if on_shift not in ("warn", "review"):
        raise ValueError(f"on_shift={on_shift!r}; valid: 'warn', 'review'")
    certified = set(absence_certified)
    out: list[str | None] = [
        EMPTY_UNCERTIFIED if (v is None or not str(v).strip()) and f not in certified else None
        for v, f in zip(values, fields, strict=True)
    ]
    review = on_shift == "review"
    if not review and malformed is None:
        return out
    for i, why in enumerate(out):
        if why is not None:
            continue
        if malformed is not None and malformed[i]:
            out[i] = MALFORMED
        elif review and out_of_domain is not None and out_of_domain[i]:
            p = novelty_p[i] if novelty_p is not None else float("nan")
            out[i] = OUT_OF_DOMAIN.format(p=p)
        elif review and batch_shifted:
            out[i] = SHIFTED_BATCH.format(p=batch_shift_p if batch_shift_p is not None else 0.0)
    return out


def reasons(
    contributions: np.ndarray,
    X: np.ndarray,
    feature_names: Sequence[str],
    decisions: Iterable[str],
    *,
    top: int = 3,
    min_contribution: float = 0.05,
) -> list[list[str]]:
    """Short phrases explaining each row's decision, from its feature contributions.

    Parameters
    ----------
    contributions : ndarray of shape (n, n_features) or (n, n_features + 1)
        Per-feature log-odds contributions (a trailing bias column is ignored).
    X : ndarray of shape (n, n_features)
        The feature values (to phrase binary and missing features by their state).
    feature_names : sequence of str
    decisions : iterable of {"accept", "review"}
        Reviewed rows are explained by their most negative contributions, accepted rows by their
        most positive ones. Rows whose page is digital PDF text (``ocr_source_pdf == 1``) never
        cite an image-quality (``q_*``) feature.
    top : int, default 3
        At most this many distinct phrases per row.
    min_contribution : float, default 0.05
        Smaller contributions (absolute log-odds) are not cited; the strongest one always is.

    Examples
    --------
    >>> C = np.array([[-2.0, 0.1, -0.5], [1.5, 0.2, 0.0]])
    >>> X = np.array([[0.0, 1.0, 0.3], [1.0, 1.0, 0.9]])
    >>> r = reasons(C, X, ["agree_equal", "lp_h_mean", "q_local_contrast"], ["review", "accept"])
    >>> r[0]
    ['Hunter and Mapper disagree', 'blurry region']
    >>> r[1]
    ['Hunter and Mapper agree', 'high token probability']

    A digital page has no JPEG artefacts, whatever the rendering's blockiness says:

    >>> names = ["q_blockiness", "lay_label_dist", "ocr_source_pdf"]
    >>> C = np.array([[-1.0, -0.5, 0.0], [-1.0, -0.5, 0.0]])
    >>> X = np.array([[9.0, 0.4, 0.0], [9.0, 0.4, 1.0]])  # a scan, then a digital PDF page
    >>> reasons(C, X, names, ["review", "review"])
    [['JPEG artefacts', 'far from its label'], ['far from its label']]
    """
    C = np.asarray(contributions, dtype=float)
    names = list(feature_names)
    if C.shape[1] == len(names) + 1:
        C = C[:, :-1]
    if C.shape[1] != len(names) or X.shape != C.shape:
        raise ValueError(
            f"contributions {C.shape} and X {X.shape} must both have {len(names)} feature columns"
        )
    dec = np.asarray(list(decisions), dtype=object)
    signed = np.where(dec[:, None] == ACCEPT, C, -C)  # larger = more responsible for the decision
    if "ocr_source_pdf" in names:  # image-quality words only for pages that are images
        digital = X[:, names.index("ocr_source_pdf")] == 1.0
        image_only = np.array([n.startswith("q_") for n in names])
        signed = np.where(digital[:, None] & image_only[None, :], 0.0, signed)
    k = min(len(names), 3 * top)  # a few spares: some phrases repeat or stay silent
    order = np.argsort(-signed, axis=1, kind="stable")[:, :k]
    # the candidates of every row as plain lists: the loop below reads no numpy scalar
    rows = zip(
        order.tolist(),
        np.take_along_axis(signed, order, axis=1).tolist(),
        np.take_along_axis(np.asarray(X, dtype=float), order, axis=1).tolist(),
        np.take_along_axis(C, order, axis=1).tolist(),
        strict=True,
    )
    out: list[list[str]] = []
    for cols, strengths, values, contribs in rows:
        words: list[str] = []
        for j, s, x, c in zip(cols, strengths, values, contribs, strict=True):
            if s <= 0 or (words and s < min_contribution):
                break
            w = phrase(names[j], x, c)
            if w and w not in words:
                words.append(w)
                if len(words) == top:
                    break
        out.append(words)
    return out


INSTRUCTION_REASONS: dict[str, str] = {
    "near": "instruction-like text near the value",
    "document": "instruction-like text in the document; value not found on the page",
}
"""Reason of a forced review, by :func:`~confidence.documents.instructions.instruction_near`."""


def guard_instructions(
    decisions: np.ndarray, why: list[list[str]], instructions: Sequence[str | None]
) -> tuple[np.ndarray, list[list[str]]]:
    """Send fields near instruction-like text to review, that reason first.

    ``instructions[i]`` is ``"near"``, ``"document"`` or None (no override); a field that was
    already reviewed keeps its other reasons after this one.

    Examples
    --------
    >>> dec, why = guard_instructions(np.array(["accept", "accept"], dtype=object),
    ...                               [["Hunter and Mapper agree"], []], ["near", None])
    >>> dec.tolist(), why[0]
    (['review', 'accept'], ['instruction-like text near the value'])
    """
    dec = np.array(decisions, dtype=object)
    out = [list(w) for w in why]
    for i, flag in enumerate(instructions):
        if flag is not None:
            keep = out[i] if dec[i] == REVIEW else []  # an accept's reasons no longer apply
            dec[i] = REVIEW
            out[i] = [INSTRUCTION_REASONS[flag], *keep]
    return dec, out


def straight_through(doc_ids: Iterable[str], decisions: Iterable[str]) -> dict[str, bool]:
    """Per document: True when every one of its fields was accepted.

    Examples
    --------
    >>> straight_through(["a", "a", "b"], ["accept", "accept", "review"])
    {'a': True, 'b': False}
    """
    out: dict[str, bool] = {}
    for d, dec in zip(doc_ids, decisions, strict=True):
        out[d] = out.get(d, True) and dec == ACCEPT
    return out


def summary(decisions: Mapping[str, bool]) -> str:
    """One line: how many documents went straight through."""
    n = len(decisions)
    k = sum(decisions.values())
    return f"{k}/{n} documents straight through ({(k / n if n else 0):.0%})"
