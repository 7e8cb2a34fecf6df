"""Realistic synthetic invoices with exact gold labels (``extractconf synth``).

Generates DocILE-style invoices in English, German and French across a dozen layout families,
with the failure modes a field-level confidence model must learn: absent fields, non-salient
printing, distractor values, credit notes, two-page documents and degraded scans.

Examples
--------
>>> from confidence.datasets.synthetic import SCHEMA, FAMILIES, synth_document
>>> len(SCHEMA) >= 20 and len(FAMILIES) >= 12
True
>>> synth_document(0, seed=1).fields.keys() == set(SCHEMA.names)
True
"""

from confidence.datasets.synthetic.fields import ABSENCE_RATES, SCHEMA
from confidence.datasets.synthetic.generate import (
    LAYOUT_VARIANTS,
    SynthDocument,
    generate,
    synth_document,
)
from confidence.datasets.synthetic.layouts import FAMILIES, Family

__all__ = [
    "ABSENCE_RATES",
    "FAMILIES",
    "LAYOUT_VARIANTS",
    "SCHEMA",
    "Family",
    "SynthDocument",
    "generate",
    "synth_document",
]
