"""On-disk cache of evaluated prompt prefixes (llama.cpp KV state), shared between processes.

Every document of one schema opens with the same prompt text (system message, field list);
within a process :class:`~confidence.llm.local.LocalLlamaClient` keeps that evaluated prefix in
its KV cache, but each new process (an ``extractconf extract`` run, a worker of a parallel
extraction) evaluated it again on its first document: a third of that document's CPU time for
a 21-field invoice. :class:`PrefixStateCache` stores a prompt's KV state
(``llama_state_seq_get_data``) with its token ids; a later process restores the longest stored
prefix its prompt shares and evaluates only the rest.

The restored cells hold exactly the values the evaluation wrote, at the same positions, so the
next logits are those of evaluating the prefix in this process (the client only reuses tokens
that were evaluated in batches of two or more, whose values do not depend on the batch:
:meth:`~confidence.llm.local.LocalLlamaClient._prime`).

An entry is ``<key>.json`` (model, token ids, sha256 and size of the state) and
``<key>.kv`` (the state bytes), written atomically; an entry whose bytes do not match its
sha256 is ignored. Location: ``$EXTRACTCONF_CACHE/llm-prefix`` when set, else
``~/.cache/extractconf/llm-prefix``; delete the folder to clear it. At most ``max_entries``
entries are kept (the least recently used are removed).

Examples
--------
>>> import tempfile
>>> cache = PrefixStateCache(tempfile.mkdtemp(), model_id="m", min_tokens=2)
>>> cache.put([1, 2, 3, 4], b"state")
True
>>> cache.best([1, 2, 3, 9, 9])
(3, [1, 2, 3, 4], b'state')
>>> cache.best([7, 8]) is None
True
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PrefixStateCache", "default_prefix_dir"]

FORMAT_VERSION = 1


def default_prefix_dir() -> Path:
    """``$EXTRACTCONF_CACHE/llm-prefix`` when set, else ``~/.cache/extractconf/llm-prefix``.

    Examples
    --------
    >>> default_prefix_dir().name
    'llm-prefix'
    """
    root = os.environ.get("EXTRACTCONF_CACHE")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "extractconf"
    return base / "llm-prefix"


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the common prefix of two token lists.

    Examples
    --------
    >>> common_prefix([1, 2, 3], [1, 2, 4, 5])
    2
    """
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PrefixStateCache:
    """Evaluated prompt states by token ids, for one model.

    Parameters
    ----------
    directory : str or Path
        Cache folder (created on first write).
    model_id : str
        Identifies the model and runtime the states belong to (part of every key; entries of
        another model are never read).
    max_entries : int, default 8
        Entries kept; the least recently used beyond this are deleted.
    min_tokens : int, default 64
        Shorter prefixes are neither stored nor restored (cheaper to evaluate than to read).
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        model_id: str,
        max_entries: int = 8,
        min_tokens: int = 64,
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries={max_entries}; keep at least 1")
        self.directory = Path(directory)
        self.model_id = model_id
        self.max_entries = max_entries
        self.min_tokens = min_tokens
        self._index: list[tuple[Path, list[int]]] | None = None

    def __repr__(self) -> str:
        return f"PrefixStateCache({str(self.directory)!r}, model_id={self.model_id!r})"

    def _key(self, tokens: Sequence[int]) -> str:
        h = hashlib.sha256(f"{FORMAT_VERSION}\0{self.model_id}\0".encode())
        h.update(json.dumps(list(tokens)).encode())
        return h.hexdigest()[:32]

    def _entries(self) -> list[tuple[Path, list[int]]]:
        """``(meta path, tokens)`` of this model's entries (read once per process)."""
        if self._index is None:
            self._index = []
            for meta in sorted(self.directory.glob("*.json")) if self.directory.is_dir() else ():
                try:
                    d = json.loads(meta.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                if d.get("format") == FORMAT_VERSION and d.get("model") == self.model_id:
                    self._index.append((meta, [int(t) for t in d["tokens"]]))
        return self._index

    def best(self, tokens: Sequence[int]) -> tuple[int, list[int], bytes] | None:
        """The stored state sharing the longest prefix with ``tokens``: (shared length, its
        tokens, its state bytes), or None when no entry shares ``min_tokens`` tokens."""
        ranked = sorted(
            ((common_prefix(t, tokens), meta, t) for meta, t in self._entries()),
            key=lambda x: -x[0],
        )
        for n, meta, stored in ranked:
            if n < self.min_tokens:
                return None
            state = self._read(meta)
            if state is not None:
                return n, stored, state
        return None

    def _read(self, meta: Path) -> bytes | None:
        try:
            d = json.loads(meta.read_text(encoding="utf-8"))
            data = meta.with_suffix(".kv").read_bytes()
        except (OSError, ValueError):
            return None
        if len(data) != d.get("size") or hashlib.sha256(data).hexdigest() != d.get("sha256"):
            return None  # cut or changed: evaluate instead
        try:
            os.utime(meta)  # recently used
        except OSError:
            pass
        return data

    def put(self, tokens: Sequence[int], state: bytes) -> bool:
        """Store ``state`` for ``tokens``; False when too short, already stored or unwritable."""
        if len(tokens) < self.min_tokens or not state:
            return False
        key = self._key(tokens)
        meta = self.directory / f"{key}.json"
        entries = self._entries()  # read before writing, so the new entry is listed once
        if meta.exists():
            return False
        d = {
            "format": FORMAT_VERSION,
            "model": self.model_id,
            "tokens": list(map(int, tokens)),
            "size": len(state),
            "sha256": hashlib.sha256(state).hexdigest(),
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _atomic_write(meta.with_suffix(".kv"), state)
            _atomic_write(meta, json.dumps(d).encode("utf-8"))
        except OSError:
            return False
        entries.append((meta, list(map(int, tokens))))
        self._evict()
        return True

    def _evict(self) -> None:
        metas = [m for m, _ in self._entries()]
        if len(metas) <= self.max_entries:
            return

        def mtime(p: Path) -> float:
            try:
                return p.stat().st_mtime
            except OSError:
                return 0.0

        for old in sorted(metas, key=mtime)[: len(metas) - self.max_entries]:
            for p in (old, old.with_suffix(".kv")):
                try:
                    p.unlink()
                except OSError:
                    pass
        self._index = [(m, t) for m, t in self._entries() if m.exists()]


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
