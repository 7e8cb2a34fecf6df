"""Documents for the review app: find a document's file under ``--documents``, render its pages,
and locate a value's box on them.

Only files under the documents folder are ever opened: a doc_id is looked up in a map built by
walking the folder (a dataset folder's ``labels.jsonl`` when there is one), and a raw path asked
for by URL must resolve inside the folder (:meth:`DocumentFolder.safe_file`).

Pages are rendered from the original file (PDF pages with PDFium, images with Pillow, EXIF
orientation applied) as JPEG, flattened, turned and straightened as ingestion did
(``Page.outline``, ``Page.rotation``, ``Page.deskew_deg``) so the normalised word boxes of
:class:`~confidence.types.Page` land on the picture; a small LRU keeps recent renders.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from confidence.documents import SUPPORTED_SUFFIXES
from confidence.documents.cache import DocumentCache
from confidence.documents.search import document_index
from confidence.errors import DocumentError, ExtractConfError
from confidence.types import BBox, Document, Page

_MAX_PIXELS = 60_000_000


class DocumentFolder:
    """The documents a review may show: ``doc_id -> file`` under one folder.

    A dataset folder (``labels.jsonl``) maps its doc_ids to its files; any other folder maps
    each supported file (searched recursively) by its name without the suffix and by its path
    relative to the folder without the suffix (``a/inv`` for ``a/inv.pdf``), as ``extractconf
    score`` names them. A name found twice is only reachable by its relative path.

    Parameters
    ----------
    root : path
    cache : DocumentCache, optional
        OCR cache used to read the documents' words (for the value boxes).
    keep : int, default 8
        Documents kept in memory.
    """

    def __init__(self, root: str | Path, *, cache: DocumentCache | None = None, keep: int = 8):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ExtractConfError(f"--documents {root}: no such folder")
        self.cache = cache if cache is not None else DocumentCache()
        self.keep = keep
        self.schema = None
        self.files = self._scan()
        self._docs: OrderedDict[str, Document | DocumentError] = OrderedDict()
        self._lock = threading.Lock()

    def _scan(self) -> dict[str, Path]:
        if (self.root / "labels.jsonl").is_file():
            from confidence.datasets.folder import Dataset

            ds = Dataset.open(self.root, check_files=False)
            self.schema = ds.schema
            return {r.doc_id: Path(ds.path_of(r)).resolve() for r in ds.records}
        out: dict[str, Path] = {}
        stems: dict[str, list[Path]] = {}
        for dirpath, _dirs, names in os.walk(self.root):
            for name in sorted(names):
                p = Path(dirpath, name)
                if name.startswith(".") or p.suffix.lower() not in SUPPORTED_SUFFIXES:
                    continue
                out[p.relative_to(self.root).with_suffix("").as_posix()] = p
                stems.setdefault(p.stem, []).append(p)
        for stem, paths in stems.items():
            if len(paths) == 1:
                out.setdefault(stem, paths[0])
        return out

    def path_of(self, doc_id: str) -> Path | None:
        """The file of ``doc_id``, or None when the folder has none."""
        return self.files.get(doc_id)

    def safe_file(self, relative: str) -> Path | None:
        """``relative`` inside the folder as an existing file, or None (outside, missing, a link
        out of it)."""
        try:
            p = (self.root / relative).resolve()
        except (OSError, ValueError):
            return None
        if not p.is_relative_to(self.root) or not p.is_file():
            return None
        return p

    def document(self, doc_id: str) -> Document | None:
        """The ingested document (from the cache when possible); None when it has no file or
        cannot be read (the app then shows the field without a picture)."""
        with self._lock:
            hit = self._docs.get(doc_id)
            if hit is not None:
                self._docs.move_to_end(doc_id)
                return hit if isinstance(hit, Document) else None
        path = self.path_of(doc_id)
        if path is None:
            return None
        try:
            doc: Document | DocumentError = self.cache.load(path, doc_id=doc_id)
        except DocumentError as e:
            doc = e
        with self._lock:
            self._docs[doc_id] = doc
            while len(self._docs) > self.keep:
                self._docs.popitem(last=False)
        return doc if isinstance(doc, Document) else None


def locate(
    document: Document, value: str | None, field_type: str | None
) -> tuple[int, BBox, str] | None:
    """(0-based page, normalised box, how) where ``value`` is on ``document``, or None.

    ``how`` is the search step that found it (:mod:`confidence.documents.search`): ``exact``,
    ``typed`` (same date or amount written differently), ``folded`` (OCR look-alikes) or
    ``fuzzy`` (similar text: the app says so, the box may be a near miss worth a look).

    Examples
    --------
    >>> from confidence.types import Page, Word
    >>> page = Page(1, 100, 100, (Word("Total", (0.1, 0.5, 0.2, 0.52)),
    ...                           Word("12.50", (0.3, 0.5, 0.4, 0.52))), "pdf", 72.0)
    >>> locate(Document("d", "d.pdf", (page,)), "12.50", "amount")
    (0, (0.3, 0.5, 0.4, 0.52), 'exact')
    """
    if value is None or not str(value).strip():
        return None
    m = document_index(document).find(str(value), field_type)
    return None if m is None else (m.page, tuple(float(v) for v in m.bbox), m.method)


def line_box(document: Document, line: int | None) -> tuple[int, BBox, str] | None:
    """(0-based page, box, ``"line"``) of reading-order line ``line`` of ``document``, or None.

    Examples
    --------
    >>> from confidence.types import Page, Word
    >>> page = Page(1, 100, 100, (Word("Total", (0.1, 0.5, 0.2, 0.52), line_id=1),
    ...                           Word("12.50", (0.3, 0.5, 0.4, 0.52), line_id=1)), "pdf", 72.0)
    >>> line_box(Document("d", "d.pdf", (page,)), 0)
    (0, (0.1, 0.5, 0.4, 0.52), 'line')
    """
    if line is None or line < 0:
        return None
    from confidence.documents.lines import document_lines

    lines = document_lines(document)
    if line >= len(lines):
        return None
    ln = lines[line]
    return ln.page - 1, tuple(float(v) for v in ln.bbox), "line"


def _image_frame(path: Path, index: int, width: int, turned: bool) -> np.ndarray:
    """Frame ``index`` of an image file as grey pixels, decoded no larger than needed for an
    upright width of about ``width`` (JPEGs decode at 1/2, 1/4, 1/8 scale directly)."""
    from PIL import Image, ImageOps, ImageSequence

    with Image.open(path) as img:
        for i, frame in enumerate(ImageSequence.Iterator(img)):
            if i < index:
                continue
            w, h = frame.size
            upright_w = h if turned else w
            if upright_w * h > 0 and frame.format == "JPEG" and upright_w > width:
                s = width / upright_w
                frame.draft("L", (int(w * s), int(h * s)))
            if i == 0 and frame.getexif().get(0x0112, 1) != 1:  # as ingestion turns it
                frame = ImageOps.exif_transpose(frame)
            from confidence.documents._images import _to_gray

            return _to_gray(frame)  # transparency laid on white, or on black, as ingestion did
    raise DocumentError(path, f"has no page {index + 1}")


def _raster(path: Path, page: Page, index: int, width: int) -> np.ndarray:
    """The upright grey raster of page ``index`` of ``path``, about ``width`` pixels wide.

    Scaled down first, then turned and straightened: both are rotations about the centre, so
    the normalised word boxes land on the same place at any scale.
    """
    turned = page.rotation in (90, 270)
    if path.suffix.lower() == ".pdf":
        from confidence.documents._pdf import PDFIUM_LOCK, open_pdf, render

        # pdfium is not thread-safe: a request and the prefetch of the next page render at once
        with PDFIUM_LOCK, open_pdf(path) as pdf:
            if index >= len(pdf):
                raise DocumentError(path, f"has no page {index + 1}")
            w_pt, h_pt = pdf[index].get_size()
            upright_pt = h_pt if turned else w_pt
            gray, _dpi, _note = render(pdf, index, 72.0 * width / max(upright_pt, 1.0), _MAX_PIXELS)
    else:
        # a photographed paper covers part of the picture: decode enough of it for ``width``
        xs = [x for x, _ in page.outline] if page.outline is not None else [0.0, 1.0]
        gray = _image_frame(path, index, round(width / max(0.1, max(xs) - min(xs))), turned)
    if page.outline is not None:  # a photographed paper, flattened as ingestion did
        from confidence.documents.perspective import flatten

        gray = flatten(gray, page.outline)
    upright_w = gray.shape[0] if turned else gray.shape[1]
    if upright_w > width * 1.1:
        s = width / upright_w
        size = (max(1, round(gray.shape[1] * s)), max(1, round(gray.shape[0] * s)))
        gray = cv2.resize(gray, size, interpolation=cv2.INTER_AREA)
    if page.rotation:
        from confidence.documents._ocr import _TURNS

        gray = cv2.rotate(gray, _TURNS[page.rotation])
    if page.deskew_deg:
        from confidence.documents._ocr import _deskew

        gray = _deskew(gray, -page.deskew_deg)
    h, w = gray.shape
    if page.width > 0 and page.height > 0 and abs(w / h * page.height / page.width - 1) > 0.03:
        # pixels ingestion resampled square (a fax's 204 x 98 dpi): the page's shape as read
        gray = cv2.resize(gray, (w, max(1, round(w * page.height / page.width))), cv2.INTER_AREA)
    return np.ascontiguousarray(gray)


class PageRenderer:
    """JPEG pictures of document pages, with a small LRU of recent renders.

    JPEG (quality 85) rather than PNG: measured on synthetic scans it encodes about 10x faster
    and is 2-5x smaller, and the page is only looked at, never read by a machine.

    Parameters
    ----------
    width : int, default 1000
        Width in pixels of the pictures.
    keep : int, default 16
        Pictures kept in memory.
    """

    def __init__(self, *, width: int = 1000, keep: int = 16) -> None:
        self.width = width
        self.keep = keep
        self._cache: OrderedDict[tuple, bytes] = OrderedDict()
        self._running: dict[tuple, Future] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def picture(self, path: Path, document: Document, index: int) -> bytes:
        """JPEG bytes of page ``index`` (0-based) of ``document`` read from ``path``.

        A render already running for the same page (a prefetch) is waited for, not repeated.
        """
        if not 0 <= index < len(document.pages):
            raise DocumentError(path, f"has no page {index + 1}")
        page = document.pages[index]
        key = (str(path), index, page.rotation, page.deskew_deg, page.outline)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
            running = self._running.get(key)
            if running is None:
                running = self._running[key] = Future()
                mine = True
            else:
                mine = False
        if not mine:
            return running.result()
        try:
            ok, buf = cv2.imencode(
                ".jpg", _raster(path, page, index, self.width), [cv2.IMWRITE_JPEG_QUALITY, 85]
            )
            if not ok:  # pragma: no cover - cv2 encodes any grey raster
                raise DocumentError(path, f"page {index + 1} could not be encoded")
            data = buf.tobytes()
        except BaseException as e:
            with self._lock:
                del self._running[key]
            running.set_exception(e)
            raise
        with self._lock:
            self._cache[key] = data
            while len(self._cache) > self.keep:
                self._cache.popitem(last=False)
            del self._running[key]
        running.set_result(data)
        return data

    def prefetch(self, folder: DocumentFolder, doc_id: str) -> None:
        """Render the first page of ``doc_id`` in the background (errors are ignored: the
        request for the picture reports them)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="prefetch")

        def work() -> None:
            path, doc = folder.path_of(doc_id), folder.document(doc_id)
            if path is not None and doc is not None and doc.pages:
                try:
                    self.picture(path, doc, 0)
                except DocumentError:
                    pass

        self._pool.submit(work)
