"""Ingestion: turn a PDF, PNG, JPEG or TIFF file into a :class:`~confidence.types.Document`.

Every page ends up upright with words (normalised boxes, confidence, font size, line and block
ids), the image quality of its raster and a coarse quality grid:

* a digital PDF page (it has a text layer) gives pdfplumber's words with ``ocr_conf = 1.0`` and
  ``source = "pdf"``; it is rendered cheaply at ``digital_dpi`` only to measure quality; a page
  that ``/Rotate`` shows turned, its text written upright, is read as written and its raster
  turned to match (``Page.rotation``, ``Page.notes``);
* a PDF page without a text layer is rendered at ``dpi`` with pypdfium2 and read by tesseract, like
  every frame of an image file (``source = "ocr"``); sideways and upside-down pages are turned
  upright and small skew is straightened first (see ``Page.rotation``, ``Page.deskew_deg``,
  ``Page.notes``).

Failures raise :class:`~confidence.errors.DocumentError` naming the file and the reason;
:func:`load_many` turns them into per-path results so one bad file never stops a batch.

The page-reading stack that calls, features and datasets share lives beside the loader, one
module per job: :mod:`~confidence.documents.lines` (reading-order lines and visual rows),
:mod:`~confidence.documents.text` (text folds), :mod:`~confidence.documents.patterns` (typed value
patterns), :mod:`~confidence.documents.normalize` (typed value parsing),
:mod:`~confidence.documents.vocab` (the label vocabulary, ``labels.json``),
:mod:`~confidence.documents.page_index` and :mod:`~confidence.documents.typed_spans` (per-page
search structures) and :mod:`~confidence.documents.search` (finding values on pages).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from confidence.documents._ocr import FAINT_PRINT_NOTE
from confidence.documents.quality import measure_page
from confidence.errors import DocumentError
from confidence.types import Document, Page

__all__ = [
    "FAINT_PRINT_NOTE",
    "HIDDEN_TEXT_CHOICES",
    "SUPPORTED_SUFFIXES",
    "load_document",
    "load_many",
]

SUPPORTED_SUFFIXES = (".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp")
HIDDEN_TEXT_CHOICES = ("ocr", "keep")
"""Values of ``load_document(hidden_text=...)``."""
HIDDEN_TEXT_FALLBACK = 0.3
"""A page read by OCR instead of its invisible text layer keeps that layer after all when
tesseract reads fewer words than this share of the layer's (a scan too poor for it)."""
_DEFAULT_MAX_PIXELS = 60_000_000  # ~A4 at 650 dpi; a grey raster this size is 60 MB


def _validate(path: str | os.PathLike[str], dpi: float, digital_dpi: float) -> Path:
    path = Path(path)
    if not (50 <= dpi <= 1200):
        raise ValueError(f"dpi must be between 50 and 1200 (300 suits tesseract), got {dpi!r}")
    if not (20 <= digital_dpi <= 600):
        raise ValueError(f"digital_dpi must be between 20 and 600, got {digital_dpi!r}")
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise DocumentError(
            path,
            f"unsupported file type {path.suffix or '(no extension)'!r}; "
            f"expected one of {', '.join(SUPPORTED_SUFFIXES)}",
        )
    if not path.exists():
        raise DocumentError(path, "file does not exist")
    if not path.is_file():
        raise DocumentError(path, "not a regular file")
    if path.stat().st_size == 0:
        raise DocumentError(path, "file is empty (0 bytes)")
    return path


def load_document(
    path: str | os.PathLike[str],
    *,
    doc_id: str | None = None,
    dpi: float = 300.0,
    digital_dpi: float = 120.0,
    keep_images: bool = False,
    lang: str = "eng",
    ocr_timeout: float = 120.0,
    max_pixels: int = _DEFAULT_MAX_PIXELS,
    grid_shape: tuple[int, int] = (8, 6),
    enlarge_small_text: bool = True,
    hidden_text: str = "ocr",
    flatten_photos: bool = True,
) -> Document:
    """Read one document file into a :class:`~confidence.types.Document`.

    Parameters
    ----------
    path : str or path-like
        A ``.pdf``, ``.png``, ``.jpg``/``.jpeg``, ``.tif``/``.tiff`` (every frame is a page),
        ``.bmp`` or ``.webp`` file. The content is sniffed; the extension only has to be one of
        these.
    doc_id : str, optional
        Identity of the document; defaults to the file name without extension.
    dpi : float, default 300
        Render resolution of PDF pages that need OCR (tesseract works best around 300).
    digital_dpi : float, default 120
        Render resolution of digital PDF pages, used only to measure image quality.
    keep_images : bool, default False
        Keep each page's upright grey raster in ``Page.image`` (memory: ~9 MB per A4 page at 300
        dpi).
    lang : str, default "eng"
        Tesseract language(s), e.g. ``"eng+fra"``.
    ocr_timeout : float, default 120
        Seconds allowed per tesseract call before the document fails.
    max_pixels : int, default 60_000_000
        Larger images are refused before decoding (JPEGs are decoded downscaled instead); larger
        PDF pages are rendered at a lower resolution.
    grid_shape : (int, int), default (8, 6)
        Rows and columns of ``Page.grid``.
    enlarge_small_text : bool, default True
        Read a scanned page whose median word is under 20 px tall a second time, on the raster
        enlarged so that it reaches 32 px, and keep the more confident reading (``Page.notes``
        then says "small text read again enlarged"). ``False`` reads every raster once: faster
        on such pages (about 2.6 times as long as one reading, ``benchmarks/results/ingest.json``)
        but small print (IBANs, e-mail lines, receipt footers) is read less well. It also
        governs the second reading of a weakly read page (faint print) on restored rasters
        ("faint print read again"): ``False`` makes no such reading either.
    hidden_text : {"ocr", "keep"}, default "ocr"
        What to do with a scanned PDF page that carries another program's OCR as invisible text
        over the page image (a "searchable PDF": images cover at least half of the page and at
        least 90 % of its text is drawn invisible). ``"ocr"`` reads the image with tesseract like
        any scan (``source="ocr"``, with OCR confidences, the second readings and the page's
        scan quality; the note says the invisible layer was set aside). ``"keep"`` takes the
        invisible words as the page's text (``source="pdf"``, confidence 1.0 for every word, as
        for digital text), which the confidence model, trained on digital and tesseract-read
        pages, never saw. Visible text is always taken as it is. When tesseract reads fewer
        than 30 % as many words as the invisible layer holds (a scan too poor for it), the
        layer is kept after all, and the note says so.
    flatten_photos : bool, default True
        Find a photographed paper's outline on a darker background (background on three sides
        at least, a step in grey all along each of them) and warp the paper to a rectangle
        before OCR (:mod:`confidence.documents.perspective`): a receipt photographed at an angle
        has converging lines that no deskew straightens. ``Page.outline`` keeps the corners
        and the page's note says so. Scans, whose paper fills the picture, are never changed.

    Returns
    -------
    Document

    Raises
    ------
    DocumentError
        Empty, truncated, corrupt, password-protected, page-less, oversized or unsupported files.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from reportlab.pdfgen import canvas
    >>> pdf = pathlib.Path(tempfile.mkdtemp()) / "hello.pdf"
    >>> c = canvas.Canvas(str(pdf)); c.drawString(72, 720, "Total 12.50"); c.save()
    >>> doc = load_document(pdf)
    >>> doc.doc_id, doc.pages[0].source, doc.text
    ('hello', 'pdf', 'Total 12.50')
    """
    path = _validate(path, dpi, digital_dpi)
    if hidden_text not in HIDDEN_TEXT_CHOICES:
        raise ValueError(
            f"hidden_text must be one of {', '.join(map(repr, HIDDEN_TEXT_CHOICES))}, "
            f"got {hidden_text!r}"
        )
    if max_pixels < 10_000:
        raise ValueError(f"max_pixels must be at least 10000, got {max_pixels!r}")
    opts = {
        "dpi": float(dpi),
        "digital_dpi": float(digital_dpi),
        "keep_images": keep_images,
        "lang": lang,
        "timeout": float(ocr_timeout),
        "max_pixels": int(max_pixels),
        "grid_shape": (int(grid_shape[0]), int(grid_shape[1])),
        "enlarge_small_text": bool(enlarge_small_text),
        "hidden_text": hidden_text,
        "flatten_photos": bool(flatten_photos),
    }
    try:
        with path.open("rb") as fh:
            head = fh.read(1024)
        from confidence.documents._images import sniff

        kind = sniff(path, head)
        pages = _load_pdf(path, opts) if kind == "pdf" else _load_image(path, opts)
    except DocumentError:
        raise
    except MemoryError:
        raise DocumentError(path, "out of memory while reading; lower dpi or max_pixels") from None
    except Exception as e:  # a library failing on a malformed file must not end a batch
        raise DocumentError(path, f"could not read ({type(e).__name__}: {e})") from e
    return Document(doc_id=doc_id if doc_id is not None else path.stem, path=str(path), pages=pages)


def _ocr_to_page(gray, dpi: float, number: int, path: Path, opts: dict, notes: list[str]) -> Page:
    from confidence.documents._ocr import ocr_page
    from confidence.documents.perspective import find_outline, flatten

    outline = find_outline(gray) if opts["flatten_photos"] else None
    if outline is not None:
        shape = gray.shape
        gray = flatten(gray, outline)
        share = gray.size / (shape[0] * shape[1])
        notes = [
            *notes,
            f"photographed paper flattened: its outline ({share:.0%} of the picture) warped "
            "to a rectangle",
        ]

    res = ocr_page(
        gray,
        dpi,
        lang=opts["lang"],
        timeout=opts["timeout"],
        path=path,
        page_no=number,
        grid_shape=opts["grid_shape"],
        enlarge_small_text=opts["enlarge_small_text"],
    )
    return Page(
        number=number,
        width=int(res.gray.shape[1]),
        height=int(res.gray.shape[0]),
        words=res.words,
        source="ocr",
        dpi=float(dpi),
        rotation=res.rotation,
        deskew_deg=round(res.deskew_deg, 3),
        quality=res.quality,
        grid=res.grid,
        notes=(*notes, *res.notes),
        outline=outline,
        image=res.gray if opts["keep_images"] else None,
    )


def _load_image(path: Path, opts: dict) -> tuple[Page, ...]:
    from confidence.documents._images import iter_frames

    pages = []
    for number, (gray, dpi, notes) in enumerate(iter_frames(path, opts["max_pixels"]), start=1):
        pages.append(_ocr_to_page(gray, dpi, number, path, opts, notes))
    if not pages:
        raise DocumentError(path, "image has no frames")
    return tuple(pages)


LOW_SCAN_DPI = 150.0
"""A scanned PDF page whose image holds fewer pixels per inch than this gets a note saying so
(:func:`confidence.documents._pdf.scan_dpi`). It is still rendered at the reading resolution:
rendered at their images' own resolution instead, the 20 seed-7 synthetic invoices whose pages
are images (100-200 dpi) gave the candidate ranker 307 fields right of 420 against 306."""


def _load_pdf(path: Path, opts: dict) -> tuple[Page, ...]:
    import pdfplumber

    from confidence.documents._pdf import (
        PDFIUM_LOCK,
        UNMAPPED_SHARE,
        hidden_text,
        open_pdf,
        reading_frame,
        render,
        scan_dpi,
        text_layer_words,
        unmapped_share,
    )

    pages = []
    with open_pdf(path) as pdf:
        with PDFIUM_LOCK:
            n_pages = len(pdf)
        try:
            plumber = pdfplumber.open(str(path))
        except Exception as e:  # pdfminer may reject what pdfium repaired
            plumber, plumber_error = None, f"{type(e).__name__}: {e}"
        try:
            for index in range(n_pages):
                number = index + 1
                notes: list[str] = []
                words, scanned = [], True
                hidden_words: list = []
                turn, turn_note = 0, ""
                if plumber is None:
                    notes.append(f"text layer unreadable ({plumber_error}); OCR used")
                else:
                    try:
                        frame, turn, turn_note = reading_frame(plumber.pages[index])
                        words, scanned = text_layer_words(frame)
                    except Exception as e:  # one bad content stream must not lose the page
                        notes.append(f"text layer unreadable ({type(e).__name__}); OCR used")
                if not scanned:
                    share = unmapped_share(plumber.pages[index])
                    if share >= UNMAPPED_SHARE:
                        notes.append(
                            f"text layer unreadable ({share:.0%} of its characters have no "
                            "Unicode: a font without a ToUnicode map); page read by OCR"
                        )
                        words, scanned = [], True
                if not scanned and opts["hidden_text"] == "ocr":
                    try:
                        hidden = hidden_text(pdf, index, plumber.pages[index])
                    except Exception as e:  # pdfium's objects unreadable: the text layer stays
                        notes.append(f"text visibility unreadable ({type(e).__name__})")
                        hidden = False
                    if hidden:
                        hidden_words = words
                        words, scanned = [], True
                if scanned:
                    try:
                        native = scan_dpi(pdf, index)
                    except Exception as e:  # pdfium's objects unreadable: no resolution to tell
                        notes.append(f"page image resolution unreadable ({type(e).__name__})")
                        native = None
                    if native is not None and native < LOW_SCAN_DPI:
                        notes.append(
                            f"page image scanned at {native:.0f} dpi (low resolution: small "
                            "print is easily misread)"
                        )
                    gray, dpi, note = render(pdf, index, opts["dpi"], opts["max_pixels"])
                    if note:
                        notes.append(note)
                    if hidden_words:
                        notes.append(
                            f"invisible text layer over a page image (another program's OCR, "
                            f"{len(hidden_words)} words) set aside; page read by OCR"
                        )
                    page = _ocr_to_page(gray, dpi, number, path, opts, notes)
                    if len(page.words) >= HIDDEN_TEXT_FALLBACK * len(hidden_words):
                        pages.append(page)
                        continue
                    # tesseract read next to nothing where the other program read words
                    notes[-1] = (
                        f"invisible text layer over a page image (another program's OCR) kept: "
                        f"tesseract read {len(page.words)} words where it has "
                        f"{len(hidden_words)}"
                    )
                    words = hidden_words
                if turn_note:
                    notes.append(turn_note)
                pages.append(_text_page(pdf, index, number, words, notes, opts, turn))
        finally:
            if plumber is not None:
                plumber.close()
    return tuple(pages)


def _text_page(
    pdf, index: int, number: int, words, notes: list[str], opts: dict, turn: int = 0
) -> Page:
    """A page whose words come from the PDF's text layer; rendered only to measure quality.

    ``turn`` (clockwise degrees) takes the page as PDFium renders it, turned by its ``/Rotate``,
    to the frame its words were read in (:func:`~confidence.documents._pdf.reading_frame`).
    """
    import cv2
    import numpy as np

    from confidence.documents._ocr import _TURNS
    from confidence.documents._pdf import render

    gray, dpi, note = render(pdf, index, opts["digital_dpi"], opts["max_pixels"])
    if note:
        notes.append(note)
    if turn:
        gray = np.ascontiguousarray(cv2.rotate(gray, _TURNS[turn]))
    quality, grid = measure_page(
        gray, dpi, words, rows=opts["grid_shape"][0], cols=opts["grid_shape"][1]
    )
    return Page(
        number=number,
        width=int(gray.shape[1]),
        height=int(gray.shape[0]),
        words=tuple(words),
        source="pdf",
        dpi=float(dpi),
        rotation=turn,
        quality=quality,
        grid=grid,
        notes=tuple(notes),
        image=gray if opts["keep_images"] else None,
    )


# ---------------------------------------------------------------------------------------- batch


def _load_or_error(
    path: str, doc_id: str | None, kwargs: dict[str, Any]
) -> Document | DocumentError:
    try:
        return load_document(path, doc_id=doc_id, **kwargs)
    except DocumentError as e:
        return e


def load_many(
    paths: Iterable[str | os.PathLike[str]],
    n_jobs: int = 1,
    *,
    doc_ids: Iterable[str | None] | None = None,
    max_in_flight: int | None = None,
    **kwargs: Any,
) -> Iterator[Document | DocumentError]:
    """Load many files in parallel, yielding one result per path in input order.

    Each result is a :class:`~confidence.types.Document` or the :class:`DocumentError` that file
    raised, so a bad file is reported in its place and the others carry on. At most
    ``max_in_flight`` documents (default ``2 * n_jobs``) are queued or held at once, so memory
    stays flat however many paths are given; ``paths`` may be a lazy iterator.

    Parameters
    ----------
    paths : iterable of path-like
    n_jobs : int, default 1
        Worker processes; 1 loads in this process, -1 uses every CPU.
    doc_ids : iterable of str or None, optional
        Parallel to ``paths``; defaults to each file's stem.
    max_in_flight : int, optional
        Bound of the submission queue.
    **kwargs
        Passed to :func:`load_document` (``dpi``, ``lang``, ...).

    Examples
    --------
    >>> [type(r).__name__ for r in load_many(["missing.pdf"])]
    ['DocumentError']
    """
    if n_jobs == -1:
        n_jobs = os.cpu_count() or 1
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive int or -1 (all CPUs), got {n_jobs!r}")
    ids: Iterator[str | None] = iter(doc_ids) if doc_ids is not None else _nones()
    items = ((str(p), next(ids, None)) for p in paths)
    if n_jobs == 1:
        for path, doc_id in items:
            yield _load_or_error(path, doc_id, kwargs)
        return
    yield from _parallel(items, n_jobs, max_in_flight or 2 * n_jobs, kwargs)


def _nones() -> Iterator[None]:
    while True:
        yield None


def _parallel(
    items: Iterator[tuple[str, str | None]], n_jobs: int, bound: int, kwargs: dict[str, Any]
) -> Iterator[Document | DocumentError]:
    # tesseract's own OpenMP threads would oversubscribe the CPUs the workers already use.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    ctx = get_context("spawn")  # fork would copy whatever threads and state the caller holds
    pool = ProcessPoolExecutor(max_workers=n_jobs, mp_context=ctx)
    queue: deque[tuple[str, str | None, Future, int]] = deque()
    try:
        exhausted = False
        while True:
            while not exhausted and len(queue) < bound:
                try:
                    path, doc_id = next(items)
                except StopIteration:
                    exhausted = True
                    break
                queue.append((path, doc_id, pool.submit(_load_or_error, path, doc_id, kwargs), 0))
            if not queue:
                return
            path, _doc_id, fut, _tries = queue[0]
            try:
                result = fut.result()
            except BrokenProcessPool:
                # A worker died (e.g. a native crash on a hostile file). Every in-flight future is
                # lost; rebuild the pool and resubmit them once each, so only a file that crashes
                # a worker twice is reported as failed.
                pool.shutdown(wait=False, cancel_futures=True)
                pool = ProcessPoolExecutor(max_workers=n_jobs, mp_context=ctx)
                pending = list(queue)
                queue.clear()
                for p, d, f, t in pending:
                    if f.done() and not f.exception():
                        queue.append((p, d, f, t))
                    elif t >= 1:
                        err = DocumentError(p, "a reader process died twice while loading it")
                        queue.append((p, d, _done(err), t))
                    else:
                        queue.append((p, d, pool.submit(_load_or_error, p, d, kwargs), t + 1))
                continue
            except Exception as e:  # e.g. a result that could not be pickled back
                result = DocumentError(path, f"worker failed ({type(e).__name__}: {e})")
            queue.popleft()
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _done(value: Any) -> Future:
    fut: Future = Future()
    fut.set_result(value)
    return fut
