"""Orchestration: seeds, one document end to end, and writing the dataset folder."""

from __future__ import annotations

import random
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from confidence.datasets.synthetic.degrade import scan
from confidence.datasets.synthetic.fields import SCHEMA
from confidence.datasets.synthetic.layouts import FAMILIES, Family
from confidence.datasets.synthetic.locales import LANGUAGES
from confidence.datasets.synthetic.render import Sheet
from confidence.datasets.synthetic.values import Invoice, make_invoice
from confidence.errors import DatasetError

RECEIPT_WIDTH = 226.8  # 80 mm
RECEIPT_PROBE = 20000.0


@dataclass(frozen=True)
class SynthDocument:
    """One generated document: its file bytes and its label line."""

    doc_id: str
    data: bytes
    suffix: str
    fields: dict[str, str | None]
    meta: dict[str, Any] = field(default_factory=dict)


def _page(family: Family, inv: Invoice, rng: random.Random, font: str, size: float) -> Any:
    if family.page == "receipt":
        # A roll is cut where the print ends: draw once on a very long strip to measure.
        state = rng.getstate()
        probe = Sheet(inv, (RECEIPT_WIDTH, RECEIPT_PROBE), rng, font, size)
        probe.bottom = -RECEIPT_PROBE
        family.draw(probe)
        rng.setstate(state)
        return (RECEIPT_WIDTH, round(RECEIPT_PROBE - probe.min_y + 50))
    if family.page == "locale":
        return "letter" if inv.locale == "en_US" else "a4"
    return family.page


def _validate(
    scan_ratio: float, languages: Sequence[str], families: Sequence[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if not 0.0 <= scan_ratio <= 1.0:
        raise DatasetError(f"scan_ratio must be within 0-1, got {scan_ratio}")
    langs = tuple(languages)
    bad = [x for x in langs if x not in LANGUAGES]
    if bad or not langs:
        raise DatasetError(
            f"unknown language(s) {', '.join(bad) or '(none)'}; use some of: {', '.join(LANGUAGES)}"
        )
    fams = tuple(families) if families else tuple(FAMILIES)
    bad = [f for f in fams if f not in FAMILIES]
    if bad:
        raise DatasetError(
            f"unknown layout family {', '.join(bad)}; use some of: {', '.join(FAMILIES)}"
        )
    return langs, fams


def synth_document(
    index: int,
    seed: int = 0,
    *,
    scan_ratio: float = 0.0,
    languages: Sequence[str] = LANGUAGES,
    families: Sequence[str] | None = None,
    family: str | None = None,
    layout_variety: float = 0.0,
) -> SynthDocument:
    """Generate document number ``index`` of the dataset with ``seed`` (pure function of both).

    Layout families are dealt round-robin in a seed-shuffled order so every family gets an
    equal share; ``family`` forces one. ``layout_variety`` is the share of documents drawn with
    one or more of :data:`LAYOUT_VARIANTS` (0, the default, reproduces earlier corpora of the
    same seed).

    Examples
    --------
    >>> d = synth_document(3, seed=7, family="classic")
    >>> d.suffix, d.meta["layout_family"], d.data[:5]
    ('.pdf', 'classic', b'%PDF-')
    """
    langs, fams = _validate(scan_ratio, languages, families)
    order = list(fams)
    random.Random(f"extractconf-synth:{seed}:families").shuffle(order)
    rng = random.Random(f"extractconf-synth:{seed}:{index}")
    fam = FAMILIES[family] if family else FAMILIES[order[index % len(order)]]
    lang = rng.choice(langs)
    inv = make_invoice(rng, lang)
    font = rng.choice(fam.fonts)
    size = round(rng.uniform(*fam.sizes) * 2) / 2
    sheet = Sheet(inv, _page(fam, inv, rng, font, size), rng, font, size)
    if layout_variety > 0:  # a stream of its own, so the rest of the document is unchanged
        vr = random.Random(f"extractconf-synth:{seed}:{index}:variety")
        if vr.random() < layout_variety:
            picked = {v for v in LAYOUT_VARIANTS if vr.random() < 0.6}
            sheet.variants = frozenset(picked or {vr.choice(LAYOUT_VARIANTS)})
    if fam.page == "receipt":
        sheet.bottom = -RECEIPT_PROBE  # sized to fit: never breaks
    fam.draw(sheet)
    deferred = {f for f, _, _ in sheet.deferred}
    lost = [f for f, v in inv.gold.items() if v is not None and f not in sheet.drawn | deferred]
    if lost:  # a layout bug: the label would claim a value the page does not show
        raise RuntimeError(f"layout {fam.name!r} did not draw field(s) {', '.join(lost)}")
    pdf = sheet.finish()
    doc_id = f"synth-{seed}-{index:05d}"
    meta: dict[str, Any] = {
        "generator": "extractconf synth",
        "seed": seed,
        "index": index,
        "layout_family": fam.name,
        "language": lang,
        "locale": inv.locale,
        "font": font,
        "font_size": size,
        "page_size": [round(sheet.width, 1), round(sheet.height, 1)],
        "n_pages": sheet.page,
        "n_items": len(inv.items),
        "credit_note": inv.credit_note,
        "date_order": inv.date_order,
        "currency_display": inv.currency_display if inv.gold["currency"] else None,
        "absent": sorted(f for f, v in inv.gold.items() if v is None),
        "non_salient": dict(sorted(inv.non_salient.items())),
        "distractors": inv.distractors,
        "labels": {
            f: inv.labels[f] for f, v in inv.gold.items() if v is not None and f in inv.labels
        },
        "normalized": {k: v for k, v in inv.normalized.items() if v is not None},
        "positions": dict(sorted(sheet.positions.items())),
        "source": "digital",
        "scan": None,
    }
    data, suffix = pdf, ".pdf"
    if rng.random() < scan_ratio:
        data, suffix, plan = scan(pdf, np.random.default_rng([seed, index, 1]))
        meta["source"] = "scan"
        meta["scan"] = plan
    if sheet.variants:
        meta["layout_variants"] = sorted(sheet.variants)
    return SynthDocument(doc_id, data, suffix, dict(inv.gold), meta)


KINDS = ("invoice", "receipt")

LAYOUT_VARIANTS = ("untitled_customer", "meta_grid")
"""Invoice layout variants of ``layout_variety``: ``untitled_customer`` prints the customer's
name and address as an address window with no "Bill to" caption over it; ``meta_grid`` prints
the document's number, dates and references as a table (captions in a header row, the values
in the row under them) instead of label/value lines."""


def _job(args: tuple) -> SynthDocument | tuple[int, str]:
    index, seed, kwargs = args
    try:
        if kwargs.get("kind") == "receipt":
            from confidence.datasets.synthetic.receipts import receipt_document

            return receipt_document(
                index,
                seed,
                scan_ratio=kwargs["scan_ratio"],
                languages=kwargs["languages"],
                header_variety=kwargs["header_variety"],
                total_variety=kwargs["total_variety"],
                fade_ratio=kwargs["fade_ratio"],
                name_variety=kwargs["name_variety"],
                address_variety=kwargs["address_variety"],
            )
        skip = ("kind", "header_variety", "total_variety", "fade_ratio", "name_variety",
                "address_variety")  # fmt: skip
        if not kwargs.get("layout_variety"):
            skip = (*skip, "layout_variety")
        return synth_document(index, seed, **{k: v for k, v in kwargs.items() if k not in skip})
    except Exception as e:  # keep the batch going; the failure is reported per document
        return index, f"{type(e).__name__}: {e}"


def generate(
    out_dir: str | Path,
    n: int,
    *,
    seed: int = 0,
    scan_ratio: float = 0.0,
    languages: Sequence[str] = LANGUAGES,
    families: Sequence[str] | None = None,
    n_jobs: int = 1,
    overwrite: bool = False,
    progress: bool = False,
    kind: str = "invoice",
    header_variety: float = 0.0,
    layout_variety: float = 0.0,
    total_variety: float = 0.0,
    fade_ratio: float = 0.0,
    name_variety: float = 0.0,
    address_variety: float = 0.0,
):
    """Write ``n`` synthetic invoices (or till receipts) as a dataset folder (``schema.json``,
    ``labels.jsonl``, ``files/``); the same ``seed`` gives byte-identical output whatever
    ``n_jobs``.

    Parameters
    ----------
    out_dir : str or Path
    n : int
        Number of documents.
    seed : int
    scan_ratio : float
        Share of documents delivered as degraded scans (PNG/JPEG; image-only PDF when 2 pages).
    languages : sequence of {"en", "de", "fr"}
    families : sequence of str, optional
        Layout families to use (default all of :data:`FAMILIES`).
    n_jobs : int
        Worker processes.
    overwrite : bool
        Replace an existing dataset in ``out_dir``.
    progress : bool
        Show a progress bar.
    kind : {"invoice", "receipt"}
        ``"receipt"`` writes till receipts with the four-field
        :data:`~confidence.datasets.synthetic.receipts.RECEIPT_SCHEMA` (``families`` is ignored).
    header_variety : float
        Receipts only: share printed with a non-plain merchant-name style
        (:data:`~confidence.datasets.synthetic.receipts.HEADER_STYLES`; wrapped names, registration
        number beside the name). 0 (default) reproduces earlier corpora of the same seed.
    layout_variety : float
        Invoices only: share drawn with one or more :data:`LAYOUT_VARIANTS` (untitled customer
        address window, reference fields as a header-row table). 0 (default) reproduces earlier
        corpora of the same seed.
    total_variety : float
        Receipts only: share printed with the ``summary`` totals style
        (:data:`~confidence.datasets.synthetic.receipts.TOTAL_STYLES`; tax-qualified captions and
        a tax summary table whose ``Total`` row sums the net amounts). 0 (default) reproduces
        earlier corpora of the same seed.
    fade_ratio : float
        Receipts only: share of the scanned receipts whose thermal print has faded (pale,
        patchy ink with broken strokes; :func:`~confidence.datasets.synthetic.degrade.fade_plan`).
        0 (default) reproduces earlier corpora of the same seed.
    name_variety : float
        Receipts only: share printed with the merchant's name at the body text's size, bold or
        regular, half of them under a logo line
        (:data:`~confidence.datasets.synthetic.receipts.NAME_PRINTS`). 0 (default) reproduces
        earlier corpora of the same seed.
    address_variety : float
        Receipts only: share printed with the merchant's address lines ending in commas, half
        of them broken at their commas into short lines
        (:data:`~confidence.datasets.synthetic.receipts.ADDRESS_PRINTS`). 0 (default) reproduces
        earlier corpora of the same seed.

    Returns
    -------
    WriteSummary
        Count written and the documents that failed, with reasons.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     print(generate(d, 2, seed=1).n_written)
    2
    """
    from confidence.datasets.folder import DatasetWriter

    if not isinstance(n, int) or n < 1:
        raise DatasetError(f"n must be a positive number of documents, got {n!r}")
    if n_jobs < 1:
        raise DatasetError(f"n_jobs must be >= 1, got {n_jobs}")
    if kind not in KINDS:
        raise DatasetError(f"kind {kind!r} is unknown; use one of: {', '.join(KINDS)}")
    langs, fams = _validate(scan_ratio, languages, families)
    if not 0.0 <= header_variety <= 1.0:
        raise DatasetError(f"header_variety must be within 0-1, got {header_variety}")
    if not 0.0 <= layout_variety <= 1.0:
        raise DatasetError(f"layout_variety must be within 0-1, got {layout_variety}")
    if not 0.0 <= total_variety <= 1.0:
        raise DatasetError(f"total_variety must be within 0-1, got {total_variety}")
    if total_variety and kind != "receipt":
        raise DatasetError("total_variety applies to receipts only (kind='receipt')")
    if not 0.0 <= fade_ratio <= 1.0:
        raise DatasetError(f"fade_ratio must be within 0-1, got {fade_ratio}")
    if fade_ratio and kind != "receipt":
        raise DatasetError("fade_ratio applies to receipts only (kind='receipt')")
    if not 0.0 <= name_variety <= 1.0:
        raise DatasetError(f"name_variety must be within 0-1, got {name_variety}")
    if name_variety and kind != "receipt":
        raise DatasetError("name_variety applies to receipts only (kind='receipt')")
    if not 0.0 <= address_variety <= 1.0:
        raise DatasetError(f"address_variety must be within 0-1, got {address_variety}")
    if address_variety and kind != "receipt":
        raise DatasetError("address_variety applies to receipts only (kind='receipt')")
    kwargs = {
        "scan_ratio": scan_ratio,
        "languages": langs,
        "families": fams,
        "kind": kind,
        "header_variety": header_variety,
        "layout_variety": layout_variety,
        "total_variety": total_variety,
        "fade_ratio": fade_ratio,
        "name_variety": name_variety,
        "address_variety": address_variety,
    }
    jobs = [(i, seed, kwargs) for i in range(n)]
    schema = SCHEMA
    if kind == "receipt":
        from confidence.datasets.synthetic.receipts import RECEIPT_SCHEMA as schema
    with DatasetWriter(out_dir, schema, overwrite=overwrite) as writer:
        if n_jobs == 1:
            results = map(_job, jobs)
            pool = None
        else:
            pool = ProcessPoolExecutor(n_jobs)
            results = pool.map(_job, jobs, chunksize=4)
        try:
            if progress:
                from tqdm import tqdm

                results = tqdm(results, total=n, desc="synth", unit="doc")
            for res in results:
                if isinstance(res, SynthDocument):
                    writer.add(
                        res.doc_id, res.fields, data=res.data, suffix=res.suffix, meta=res.meta
                    )
                else:
                    prefix = "receipt" if kind == "receipt" else "synth"
                    writer.skip(f"{prefix}-{seed}-{res[0]:05d}", res[1])
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        return writer.summary()
