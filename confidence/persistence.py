"""Saving and loading fitted parts: one ``to_dict``/``from_dict`` + files protocol, no pickle.

Every fitted part (fusion classifier, each calibrator, threshold selector, engine) registers a
**kind** with :func:`register_part`; saving and loading dispatch on that registry, never on a
class name. A part class provides

* ``to_dict()`` -> JSON-ready dict of its state, and ``from_dict(d)`` (classmethod) rebuilding it;
* optionally ``_subparts``: ``{name: attribute}`` of fitted parts it is made of (the engine:
  fusion, calibrator, thresholds, domain reference), each stored under its own name; those
  named in ``_optional_subparts`` may be None (not written) and may be absent from a file
  (loaded as None), so a part added later does not invalidate older folders;
* optionally, in the registry, ``text_fields``: ``{key: suffix}`` of large text values of its
  dict written as files of their own (the LightGBM text model of the fusion classifier).

On disk:

* **a single part** (e.g. ``extractconf tune``'s thresholds file) is one JSON file
  ``{"kind", "format_version", "extractconf_version", "sha256", "data"}``; ``sha256`` is the hash
  of ``data`` in canonical form (sorted keys, no spaces), so a changed value is detected;
* **a model folder** (a part with sub-parts or text files) holds one such file per part
  (``engine.json``, ``fusion.json``, ``fusion.lgb.txt``, ``calibrator.json``, ``thresholds.json``,
  ``domain.json``)
  and ``manifest.json`` listing *every* file of the folder with its sha256, kind and format
  version (documentation files added with :func:`attach` too).

Loading checks everything before building anything: a missing or unlisted file, a changed byte,
an unknown part kind or a format version newer than this extractconf reads is a
:class:`~confidence.errors.ModelError` naming the file.

Examples
--------
>>> from confidence.calibration import IsotonicCalibrator
>>> cal = IsotonicCalibrator().fit([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1])
>>> back = from_dict(to_dict(cal))
>>> back.predict_proba([0.5]).tolist() == cal.predict_proba([0.5]).tolist()
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confidence import __version__
from confidence.errors import ModelError
from confidence.jsonsafe import jsonable

__all__ = [
    "MANIFEST",
    "MANIFEST_VERSION",
    "PARTS",
    "PartKind",
    "attach",
    "fingerprint",
    "from_dict",
    "kind_of",
    "load",
    "register_part",
    "save",
    "to_dict",
]

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
ATTACHMENT = "attachment"
"""Kind of a file that is not a part (a model card, metrics), checksummed all the same."""


@dataclass(frozen=True)
class PartKind:
    """One registered kind of fitted part."""

    kind: str
    cls: type
    format_version: int
    text_fields: Mapping[str, str] = field(default_factory=dict)


PARTS: dict[str, PartKind] = {}
"""kind -> :class:`PartKind`, filled by :func:`register_part`."""


def register_part(
    kind: str, *, format_version: int, text_fields: Mapping[str, str] | None = None
) -> Callable[[type], type]:
    """Class decorator registering a persistable part kind.

    Parameters
    ----------
    kind : str
        Name written in files; must be unique.
    format_version : int
        Version of the class's ``to_dict`` layout; raise it when the layout changes.
    text_fields : dict of str -> str, optional
        Keys of ``to_dict()`` whose (text) values are written to ``<file stem><suffix>``.
    """

    def deco(cls: type) -> type:
        if kind in PARTS and PARTS[kind].cls is not cls:
            raise ValueError(f"part kind {kind!r} is already registered")
        PARTS[kind] = PartKind(kind, cls, format_version, dict(text_fields or {}))
        return cls

    return deco


def kind_of(part: Any) -> PartKind:
    """The registered kind of a part object (by its class, not its name)."""
    for pk in PARTS.values():
        if type(part) is pk.cls:
            return pk
    raise TypeError(
        f"{type(part).__name__} is not a persistable part; registered kinds: "
        f"{', '.join(sorted(PARTS))}"
    )


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _sha(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def _subparts(part: Any) -> dict[str, Any]:
    subs = {
        name: getattr(part, attr, None) for name, attr in getattr(part, "_subparts", {}).items()
    }
    return {name: p for name, p in subs.items() if p is not None}


def fingerprint(part: Any) -> str:
    """sha256 of a part's state (sub-parts included) in canonical form: equal state, equal print.

    Recorded in scored rows (``model_sha``, ``thresholds_sha``) so that a change of model or
    thresholds between two batches can be reported by ``extractconf monitor``.
    """
    return _sha(_canonical(to_dict(part)))


# -- in memory ------------------------------------------------------------------------------
def to_dict(part: Any) -> dict[str, Any]:
    """A part and its sub-parts as one JSON-ready dict (text fields inline)."""
    pk = kind_of(part)
    out: dict[str, Any] = {
        "kind": pk.kind,
        "format_version": pk.format_version,
        "data": jsonable(part.to_dict()),
    }
    subs = _subparts(part)
    if subs:
        out["parts"] = {name: to_dict(p) for name, p in subs.items()}
    return out


def _resolve(d: Mapping[str, Any], where: str) -> PartKind:
    kind = d.get("kind") if isinstance(d, Mapping) else None
    pk = PARTS.get(kind)  # type: ignore[arg-type]
    if pk is None:
        raise ModelError(
            f"{where}: unknown part kind {kind!r} (known: {', '.join(sorted(PARTS))}); "
            "it was written by another extractconf or is corrupt"
        )
    version = d.get("format_version")
    if not isinstance(version, int) or version > pk.format_version or version < 1:
        raise ModelError(
            f"{where}: {kind} format version {version!r}, this extractconf ({__version__}) reads "
            f"version {pk.format_version}; install the extractconf that wrote it or retrain"
        )
    if version < pk.format_version:
        raise ModelError(
            f"{where}: {kind} format version {version} is older than {pk.format_version}; "
            "re-save the model with the extractconf that wrote it, or retrain"
        )
    return pk


def _build(pk: PartKind, data: Mapping[str, Any], subs: Mapping[str, Any], where: str) -> Any:
    try:
        part = pk.cls.from_dict(dict(data))
    except ModelError as e:
        raise ModelError(f"{where}: {e}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ModelError(f"{where}: malformed {pk.kind} ({e!r}); retrain") from e
    wanted = getattr(pk.cls, "_subparts", {})
    optional = set(getattr(pk.cls, "_optional_subparts", ()))
    if not set(wanted) - optional <= set(subs) <= set(wanted):
        raise ModelError(f"{where}: {pk.kind} needs parts {sorted(wanted)}, got {sorted(subs)}")
    for name, attr in wanted.items():
        setattr(part, attr, subs.get(name))
    return part


def from_dict(d: Mapping[str, Any], *, where: str = "part") -> Any:
    """Rebuild what :func:`to_dict` returned; :class:`ModelError` for an unknown kind/version."""
    pk = _resolve(d, where)
    subs = {
        name: from_dict(sub, where=f"{where}.{name}") for name, sub in d.get("parts", {}).items()
    }
    return _build(pk, d.get("data", {}), subs, where)


# -- files ----------------------------------------------------------------------------------
def _is_folder_part(part: Any) -> bool:
    return bool(getattr(part, "_subparts", {})) or bool(kind_of(part).text_fields)


def _envelope(pk: PartKind, data: dict[str, Any], parts: dict[str, str] | None = None) -> bytes:
    env: dict[str, Any] = {
        "kind": pk.kind,
        "format_version": pk.format_version,
        "extractconf_version": __version__,
        "sha256": _sha(_canonical(data)),
        "data": data,
    }
    if parts:
        env["parts"] = parts
    return (json.dumps(env, indent=1, allow_nan=False) + "\n").encode()


def _write_part(part: Any, d: Path, stem: str, files: dict[str, dict[str, Any]]) -> str:
    pk = kind_of(part)
    data = jsonable(part.to_dict())
    for key, suffix in pk.text_fields.items():
        name = stem + suffix
        blob = str(data[key]).encode("utf-8")
        (d / name).write_bytes(blob)
        files[name] = {"sha256": _sha(blob), "kind": pk.kind, "format_version": pk.format_version}
        data[key] = {"file": name, "sha256": _sha(blob)}
    refs = {name: _write_part(sub, d, name, files) for name, sub in _subparts(part).items()}
    name = f"{stem}.json"
    blob = _envelope(pk, data, refs)
    (d / name).write_bytes(blob)
    files[name] = {"sha256": _sha(blob), "kind": pk.kind, "format_version": pk.format_version}
    return name


def save(part: Any, path: str | Path, *, root: str | None = None) -> Path:
    """Write a part: one JSON file, or a folder with ``manifest.json`` (see module docstring).

    ``path`` ending in ``.json`` writes a single file (only for parts without sub-parts or text
    files); otherwise a folder is written (created if needed) and returned, its main file named
    ``<root or kind>.json``.
    """
    p = Path(path)
    pk = kind_of(part)
    if p.suffix == ".json":
        if _is_folder_part(part):
            raise ValueError(f"{path}: a {pk.kind} is saved as a folder; pass a folder path")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(_envelope(pk, jsonable(part.to_dict())))
        return p
    p.mkdir(parents=True, exist_ok=True)
    files: dict[str, dict[str, Any]] = {}
    main = _write_part(part, p, root or pk.kind, files)
    _write_manifest(p, main, files)
    return p


def _write_manifest(d: Path, main: str, files: dict[str, dict[str, Any]]) -> None:
    body = {
        "format_version": MANIFEST_VERSION,
        "extractconf_version": __version__,
        "main": main,
        "files": files,
    }
    man = {**body, "sha256": _sha(_canonical(body))}
    (d / MANIFEST).write_text(json.dumps(man, indent=1, sort_keys=True) + "\n")


def attach(directory: str | Path, *names: str) -> None:
    """Add files (model card, metrics) of a saved model folder to its manifest."""
    d = Path(directory)
    man = _read_manifest(d)
    files = dict(man["files"])
    for name in names:
        files[name] = {
            "sha256": _sha((d / name).read_bytes()),
            "kind": ATTACHMENT,
            "format_version": MANIFEST_VERSION,
        }
    _write_manifest(d, man["main"], files)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        d = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ModelError(f"{path}: missing") from None
    except (OSError, ValueError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ModelError(f"{path}: unreadable ({e}); the file is corrupt") from None
    if not isinstance(d, dict):
        raise ModelError(f"{path}: not a JSON object; the file is corrupt")
    return d


def _read_manifest(d: Path) -> dict[str, Any]:
    path = d / MANIFEST
    if not path.exists():
        raise ModelError(f"{path}: no manifest; not a saved model folder (or written before "
                         "manifests: retrain or re-save it)")  # fmt: skip
    man = _read_json(path)
    try:
        body = {k: v for k, v in man.items() if k != "sha256"}
        ok = man["sha256"] == _sha(_canonical(body)) and {"main", "files"} <= set(body)
    except (KeyError, TypeError, ValueError):
        ok = False
    if not ok:
        raise ModelError(f"{path}: checksum mismatch, the manifest is corrupt or was edited")
    if not isinstance(man["format_version"], int) or man["format_version"] > MANIFEST_VERSION:
        raise ModelError(
            f"{path}: manifest version {man['format_version']!r}, this extractconf "
            f"({__version__}) reads {MANIFEST_VERSION}; install the extractconf that wrote it"
        )
    return man


def _verify_folder(d: Path) -> dict[str, Any]:
    man = _read_manifest(d)
    files = man["files"]
    for name, entry in files.items():
        path = d / name
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            raise ModelError(f"{path}: missing (listed in {MANIFEST})") from None
        except OSError as e:
            raise ModelError(f"{path}: unreadable ({e})") from None
        if _sha(blob) != entry.get("sha256"):
            raise ModelError(f"{path}: checksum mismatch, the file is corrupt or was changed")
        kind = entry.get("kind")
        if kind != ATTACHMENT and kind not in PARTS:
            raise ModelError(f"{path}: unknown part kind {kind!r} in {MANIFEST}")
    extra = sorted(
        p.name
        for p in d.iterdir()
        if p.is_file() and p.name != MANIFEST and not p.name.startswith(".") and p.name not in files
    )
    if extra:
        raise ModelError(f"{d / extra[0]}: not listed in {MANIFEST}; remove it or re-save")
    return man


def _read_part(path: Path) -> tuple[PartKind, dict[str, Any], dict[str, str]]:
    env = _read_json(path)
    pk = _resolve(env, str(path))
    data = env.get("data")
    if not isinstance(data, dict) or env.get("sha256") != _sha(_canonical(data)):
        raise ModelError(f"{path}: checksum mismatch, the file is corrupt or was edited")
    return pk, data, dict(env.get("parts") or {})


def _load_part(d: Path, name: str) -> Any:
    path = d / name
    pk, data, refs = _read_part(path)
    for key in pk.text_fields:
        ref = data.get(key)
        if not isinstance(ref, dict) or "file" not in ref:
            raise ModelError(f"{path}: {key!r} does not name its file; the file is corrupt")
        blob = (d / ref["file"]).read_bytes()
        if _sha(blob) != ref.get("sha256"):
            raise ModelError(f"{d / ref['file']}: checksum mismatch, the file is corrupt")
        try:
            data[key] = blob.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ModelError(f"{d / ref['file']}: not UTF-8 text ({e})") from None
    subs = {sub: _load_part(d, ref) for sub, ref in refs.items()}
    return _build(pk, data, subs, str(path))


def load(path: str | Path, *, expect: type | None = None) -> Any:
    """Read what :func:`save` wrote (file or folder), checking every byte first.

    Parameters
    ----------
    path : str or Path
        A part file (``.json``) or a model folder.
    expect : type, optional
        The class the result must be (a :class:`ModelError` otherwise).
    """
    p = Path(path)
    if p.is_dir():
        man = _verify_folder(p)
        part = _load_part(p, man["main"])
    elif p.exists():
        pk, data, refs = _read_part(p)
        if refs or pk.text_fields:
            raise ModelError(f"{p}: a {pk.kind} is a folder; load the folder that holds it")
        part = _build(pk, data, {}, str(p))
    else:
        raise ModelError(f"{p}: no such file or folder")
    if expect is not None and not isinstance(part, expect):
        raise ModelError(f"{p}: holds a {kind_of(part).kind}, not a {expect.__name__}")
    return part
