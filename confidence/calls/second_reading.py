"""A second reading for records that bring only one: the library's own layout Mapper.

Third-party pipelines send one reading per document (values, maybe logprobs). Disagreement between
two readings and "found on the page" evidence for the Mapper's value are among the strongest
signals, so when the document is at hand the library reads it itself with its Mapper in layout
mode (:func:`confidence.calls.mapper.run_mapper` without a client: labelled values from the page
layout, no LLM, no logprobs) and uses that as the record's Mapper.

The same replacement is applied when training (``extractconf train --single-reading``), so the
model has seen such records; :func:`drop_mapper` gives the other case a caller may present (no
document, hence no second reading).

The Mapper made here has ``mode`` :data:`LIBRARY_MAPPER_MODE`; scored rows name it in their
``llm`` column as :data:`LIBRARY_MAPPER_NAME`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from confidence.calls.mapper import run_mapper
from confidence.documents.lines import document_lines
from confidence.errors import ExtractConfError
from confidence.readings import CallResult, FieldReading, RunRecord  # noqa: F401 (doctest)
from confidence.schema import Schema
from confidence.types import Document

__all__ = [
    "LIBRARY_MAPPER_MODE",
    "LIBRARY_MAPPER_NAME",
    "add_library_mapper",
    "drop_mapper",
    "foreign_values",
    "library_mapper",
    "needs_mapper",
]

LIBRARY_MAPPER_MODE = "library-layout"
"""``CallResult.mode`` of a Mapper reading made by :func:`library_mapper`."""

LIBRARY_MAPPER_NAME = "extractconf-layout-mapper"
"""How a scored row's ``llm`` names the library's Mapper when it made the second reading."""


def library_mapper(schema: Schema, document: Document) -> CallResult:
    """The library's Mapper reading of ``document`` (layout only, no LLM).

    Examples
    --------
    >>> from confidence.schema import Field
    >>> from confidence.types import Page, Word
    >>> words = (Word("Total:", (0.1, 0.5, 0.2, 0.52), line_id=1),
    ...          Word("9.00", (0.3, 0.5, 0.4, 0.52), line_id=1))
    >>> doc = Document("d1", "d1.pdf", (Page(1, 850, 1100, words, "pdf", 100.0),))
    >>> m = library_mapper(Schema("s", (Field("total", "amount"),)), doc)
    >>> m.mode, m.fields["total"].value, m.fields["total"].tokens is None
    ('library-layout', '9.00', True)
    """
    call = run_mapper(schema, document_lines(document), None)
    return replace(call, mode=LIBRARY_MAPPER_MODE, n_calls=0)


def needs_mapper(record: RunRecord) -> bool:
    """Whether a record has one reading (a Hunter, no Mapper) and did not fail as a whole."""
    return record.mapper is None and record.hunter is not None and record.status != "error"


def add_library_mapper(
    records: Iterable[RunRecord], schema: Schema, documents: Mapping[str, Document] | None
) -> list[RunRecord]:
    """Records with the library's Mapper as second reading where one is missing.

    Only records that :func:`needs_mapper` and whose document is in ``documents`` change; their
    ``meta["second_reading"]`` says ``"library_mapper"``. A Mapper that fails on a document
    leaves the record as it was, with the reason in ``meta["second_reading_error"]``.
    """
    documents = documents or {}
    out = []
    for rec in records:
        doc = documents.get(rec.doc_id)
        if doc is None or not needs_mapper(rec):
            out.append(rec)
            continue
        try:
            mapper = library_mapper(schema, doc)
        except (ExtractConfError, ValueError) as e:
            out.append(replace(rec, meta={**rec.meta, "second_reading_error": str(e)}))
            continue
        out.append(
            replace(rec, mapper=mapper, meta={**rec.meta, "second_reading": "library_mapper"})
        )
    return out


FOREIGN_SHARE = 0.3
"""Share of a record's fields :func:`foreign_values` fills with another document's values."""


def drop_mapper(records: Iterable[RunRecord]) -> list[RunRecord]:
    """Records with their Mapper reading removed (a one-reading pipeline's records).

    Records whose Hunter is missing keep their Mapper: a record needs one reading. What such a
    record reports is its one reading, the Hunter's: a ``meta["reported"]`` that named the
    dropped Mapper (the embedded model's runs report the layout reader's value) is set to
    ``"hunter"``, so that a second reading added later (:func:`add_library_mapper`) is a second
    opinion on the pipeline's value, as for a third-party record, and not the value scored.

    Examples
    --------
    >>> r = RunRecord("d", CallResult("hunter", {}), CallResult("mapper", {}),
    ...               meta={"reported": "mapper"})
    >>> one = drop_mapper([r])[0]
    >>> one.mapper is None, one.meta["reported"]
    (True, 'hunter')
    """
    return [
        replace(r, mapper=None, meta={**r.meta, "reported": "hunter"})
        if r.hunter is not None
        else r
        for r in records
    ]


def foreign_values(
    records: Sequence[RunRecord], *, share: float = FOREIGN_SHARE, seed: int = 0
) -> list[RunRecord]:
    """One-reading records some of whose values belong to another document (training negatives).

    A pipeline's LLM can report, confidently, a value that is not on the page: a name, an IBAN
    or a total from its prompt's examples, from another document of the batch, or made up. The
    embedded model's Hunter cannot (it chooses among the page's candidates), so a fusion trained
    on its runs alone never saw such a value, and accepted a batch whose records were paired with
    the wrong documents (57 of 84 fields accepted wrong, the seventeenth session's sweep). Each
    record here takes, for about ``share`` of the fields both readings hold with different
    values, the Hunter's reading (value and token logprobs) of the same field of another record
    of ``records`` (the next one in a seeded order). Records keep their doc_id, so their labels
    judge those values against their own document. Records must carry one reading
    (:func:`drop_mapper` first); a record without a Hunter, or a lone record, is left as it is.

    Examples
    --------
    >>> a = RunRecord("a", CallResult("hunter", {"total": FieldReading("9.00")}), None)
    >>> b = RunRecord("b", CallResult("hunter", {"total": FieldReading("1.50")}), None)
    >>> [r.hunter.fields["total"].value for r in foreign_values([a, b], share=1.0)]
    ['1.50', '9.00']
    """
    recs = list(records)
    have = [i for i, r in enumerate(recs) if r.hunter is not None]
    if len(have) < 2:
        return recs
    rng = np.random.default_rng(seed)
    order = [have[i] for i in rng.permutation(len(have))]
    out = list(recs)
    for k, i in enumerate(order):
        own, donor = recs[i].hunter, recs[order[(k + 1) % len(order)]].hunter
        assert own is not None and donor is not None
        fields = dict(own.fields)
        for name, theirs in donor.fields.items():
            mine = fields.get(name)
            if theirs.value is None or (mine is not None and mine.value == theirs.value):
                continue
            if rng.random() < share:
                fields[name] = theirs
        if fields != own.fields:
            out[i] = replace(
                recs[i], hunter=replace(own, fields=fields),
                meta={**recs[i].meta, "reported": "hunter", "foreign_values": True},
            )  # fmt: skip
    return out
