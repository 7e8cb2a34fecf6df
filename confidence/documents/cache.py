"""Content-addressed cache of ingested documents, so training and evaluation OCR each file once.

The key of a file is ``sha256(file bytes)`` plus :data:`INGEST_VERSION` and the ingestion options
(dpi, language, ...): the same bytes under another name hit the cache, a changed file or a new
ingestion version misses it. Entries are gzipped :meth:`Document.to_dict` JSON (no pickle), written
atomically so parallel workers never read half a file.

Location: ``--cache-dir`` / ``DocumentCache(directory)``, else ``$EXTRACTCONF_CACHE/documents``,
else ``~/.cache/extractconf/documents``. Delete the folder to clear it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from confidence.errors import DocumentError
from confidence.types import Document

__all__ = ["INGEST_VERSION", "DocumentCache", "default_cache_dir"]

INGEST_VERSION = "13"
"""Bump when ingestion output changes (new OCR settings, new Word fields), to invalidate entries.

4: words the page segmentation left unread are re-read (:mod:`confidence.documents._ocr`).
5: pages that read no words: a deskew after which the page reads none is dropped, and a page
   that still reads none is read again after a local threshold.
6: small text is read again on the raster enlarged.
7: a weakly read page (faint print) is read again on restored rasters.
8: a pale page whose grey values barely vary is blank only when no stroke stands out from its
   paper (:func:`confidence.documents.quality.faint_ink`; before, faded receipts were skipped);
   faint print is also read on a smoothed, flattened raster, and a page that read no word at all
   is restored too.
11: every word with a digit is read a second time, alone (``Word.alone``,
   :mod:`confidence.documents.alone`).
12: a scanned PDF page under another program's invisible OCR text is read by tesseract
   (``load_document(hidden_text="ocr")``), not from that text; so is a PDF page whose text
   layer has no Unicode for a fifth of its characters; a character drawn twice at the same
   place (bold by overprinting) is read once; a photographed paper's outline is flattened
   (:mod:`confidence.documents.perspective`).
13: a digital PDF page that ``/Rotate`` shows turned, or whose text is printed turned, is read
   turned upright; a fax's pixels (204 x 98 dpi) are resampled square; light print on a dark
   page is read inverted; a page is called blank only if it shows no ink at full size too; a
   low-resolution page image in a PDF is noted."""


def default_cache_dir() -> Path:
    """``$EXTRACTCONF_CACHE/documents`` when set, else ``~/.cache/extractconf/documents``.

    Examples
    --------
    >>> default_cache_dir().name
    'documents'
    """
    root = os.environ.get("EXTRACTCONF_CACHE")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "extractconf"
    return base / "documents"


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class DocumentCache:
    """Load documents through a content-addressed on-disk cache.

    Parameters
    ----------
    directory : str or Path or None
        Cache folder; :func:`default_cache_dir` when None.
    enabled : bool, default True
        False loads every file afresh (and writes nothing).
    **load_options
        Passed to :func:`confidence.documents.load_document` (``dpi``, ``lang``, ...); part of
        the key.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from reportlab.pdfgen import canvas
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> c = canvas.Canvas(str(tmp / "a.pdf")); c.drawString(72, 720, "Total 12.50"); c.save()
    >>> cache = DocumentCache(tmp / "cache")
    >>> cache.load(tmp / "a.pdf", doc_id="a").text, cache.hits, cache.misses
    ('Total 12.50', 0, 1)
    >>> cache.load(tmp / "a.pdf", doc_id="again").doc_id, cache.hits
    ('again', 1)
    """

    def __init__(
        self, directory: str | Path | None = None, *, enabled: bool = True, **load_options: Any
    ) -> None:
        self.directory = Path(directory).expanduser() if directory else default_cache_dir()
        self.enabled = enabled
        self.load_options = load_options
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"DocumentCache({str(self.directory)!r}, enabled={self.enabled})"

    def key(self, path: str | Path) -> str:
        """Cache key of a file: content hash + ingestion version + options."""
        opts = json.dumps(self.load_options, sort_keys=True, default=str)
        h = hashlib.sha256(f"{_file_digest(Path(path))}|{INGEST_VERSION}|{opts}".encode())
        return h.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json.gz"

    def get(self, path: str | Path, doc_id: str | None = None) -> Document | None:
        """The cached document of ``path`` (renamed to ``doc_id``), or None on a miss."""
        try:
            entry = self._entry(self.key(path))
        except OSError:
            return None
        try:
            with gzip.open(entry, "rt", encoding="utf-8") as fh:
                doc = Document.from_dict(json.load(fh))
        except (OSError, ValueError, KeyError, TypeError, EOFError):
            return None  # missing or damaged entry: re-ingest
        return replace(doc, doc_id=doc_id or Path(path).stem, path=str(path))

    def put(self, path: str | Path, document: Document) -> None:
        """Store an ingested document under the key of ``path`` (atomic write)."""
        entry = self._entry(self.key(path))
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as raw, gzip.open(raw, "wt", encoding="utf-8") as fh:
                json.dump(document.to_dict(), fh, separators=(",", ":"))
            os.replace(tmp, entry)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def load(self, path: str | Path, doc_id: str | None = None) -> Document:
        """Load one file, from the cache when possible; raises :class:`DocumentError`."""
        from confidence.documents import load_document

        if self.enabled:
            doc = self.get(path, doc_id)
            if doc is not None:
                self.hits += 1
                return doc
        self.misses += 1
        doc = load_document(path, doc_id=doc_id, **self.load_options)
        if self.enabled:
            try:
                self.put(path, doc)
            except OSError:
                pass  # a read-only cache must not fail the batch; the document is still good
        return doc

    def load_many(
        self,
        paths: Iterable[str | Path],
        doc_ids: Iterable[str | None] | None = None,
        n_jobs: int = 1,
    ) -> Iterator[Document | DocumentError]:
        """Yield one Document or DocumentError per path, in order; misses ingest in parallel."""
        from confidence.documents import load_many

        paths = [Path(p) for p in paths]
        ids = list(doc_ids) if doc_ids is not None else [None] * len(paths)
        found: dict[int, Document] = {}
        if self.enabled:
            for i, (p, d) in enumerate(zip(paths, ids, strict=True)):
                doc = self.get(p, d)
                if doc is not None:
                    found[i] = doc
        self.hits += len(found)
        todo = [i for i in range(len(paths)) if i not in found]
        self.misses += len(todo)
        fresh = load_many(
            (paths[i] for i in todo),
            n_jobs=n_jobs,
            doc_ids=(ids[i] for i in todo),
            **self.load_options,
        )
        pending = iter(zip(todo, fresh, strict=True))
        for i in range(len(paths)):
            if i in found:
                yield found[i]
                continue
            j, result = next(pending)
            assert j == i
            if self.enabled and isinstance(result, Document):
                try:
                    self.put(paths[i], result)
                except OSError:
                    pass
            yield result
