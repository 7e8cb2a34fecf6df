"""Arguments and loading shared by ``train``, ``evaluate``, ``tune`` and ``score``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from confidence.cli._args import megapixels, positive_int
from confidence.errors import DatasetError


def add_runs_args(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    p.add_argument(
        "--runs",
        nargs="+",
        required=required,
        metavar="RUNS",
        help="runs.jsonl(.gz) files from `extractconf extract` (records matched by doc_id)",
    )


def add_document_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cache-dir",
        default=None,
        help="ingested-document cache (default $EXTRACTCONF_CACHE/documents or "
        "~/.cache/extractconf/documents)",
    )
    p.add_argument("--no-cache", action="store_true", help="ingest every file afresh")
    p.add_argument(
        "--no-documents",
        action="store_true",
        help="do not ingest the files: page features (OCR, quality, layout) are left missing",
    )
    p.add_argument("--n-jobs", type=positive_int, default=1, help="ingestion processes (default 1)")
    add_read_once_arg(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def add_read_once_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--read-once",
        action="store_true",
        help="OCR every scanned page once, as it is: no second reading of small text on an "
        "enlarged raster nor of faint print on restored ones (faster on such pages; small and "
        "faint print are read less well)",
    )
    p.add_argument(
        "--keep-hidden-text",
        action="store_true",
        help="take the invisible text that a scanner or OCR program wrote over a scanned PDF "
        "page as the page's words (default: read such a page by OCR, like any scan; the "
        "confidence model never saw another program's OCR)",
    )
    p.add_argument(
        "--no-flatten",
        action="store_true",
        help="read a photographed page as it lies (default: a paper photographed at an angle "
        "on a darker background is flattened to a rectangle before OCR)",
    )
    p.add_argument(
        "--max-megapixels",
        type=megapixels,
        default=None,
        metavar="MP",
        help="refuse an image larger than this (default 60; a JPEG is decoded smaller instead): "
        "a guard against files that would exhaust memory",
    )


def load_options(args) -> dict:
    """Options for :func:`~confidence.documents.load_document` that the command line sets
    (only those that differ from the defaults, so the document cache keys stay the same)."""
    out: dict = {}
    if getattr(args, "read_once", False):
        out["enlarge_small_text"] = False
    if getattr(args, "keep_hidden_text", False):
        out["hidden_text"] = "keep"
    if getattr(args, "no_flatten", False):
        out["flatten_photos"] = False
    if getattr(args, "max_megapixels", None) is not None:
        out["max_pixels"] = round(args.max_megapixels * 1_000_000)
    return out


def add_model_arg(
    p: argparse.ArgumentParser,
    default_help: str = "default: the model shipped with extractconf",
) -> None:
    p.add_argument(
        "--model",
        default=None,
        metavar="MODEL_DIR",
        help=f"engine folder from `extractconf train` ({default_help})",
    )


def add_guarantee_args(p: argparse.ArgumentParser) -> None:
    """``--target-accuracy`` and ``--confidence-level`` of the per-field threshold guarantee."""
    p.add_argument("--target-accuracy", type=float, default=0.99)
    p.add_argument("--confidence-level", type=float, default=0.9)


def check_guarantee_args(args) -> None:
    """Both guarantee numbers must lie strictly between 0 and 1."""
    for name in ("target_accuracy", "confidence_level"):
        v = getattr(args, name)
        if not 0 < v < 1:
            raise DatasetError(f"--{name.replace('_', '-')} {v}: pass a number between 0 and 1")


def open_datasets(paths):
    from confidence.datasets.folder import Dataset

    out = []
    for p in paths:
        if not Path(p).is_dir():
            raise DatasetError(f"{p}: not a dataset folder (schema.json + labels.jsonl + files/)")
        out.append(Dataset.open(p))
    return out


def make_cache(args):
    from confidence.documents.cache import DocumentCache

    return DocumentCache(args.cache_dir, enabled=not args.no_cache, **load_options(args))


def load_table(
    args, datasets, *, readings: str = "recorded", use_documents: bool = True, runs=None
):
    """Build the labelled table for ``args.runs`` over ``datasets``; prints what was skipped.

    ``readings`` as for :func:`~confidence.evaluation.table.build_table`; ``use_documents=False``
    leaves the page out whatever ``--no-documents`` says; ``runs`` (doc_id -> RunRecord) saves
    reading ``args.runs`` again.
    """
    from confidence.evaluation.table import build_table
    from confidence.records import load_runs

    runs = load_runs(args.runs) if runs is None else runs
    table = build_table(
        datasets,
        runs,
        cache=make_cache(args),
        use_documents=use_documents and not args.no_documents,
        n_jobs=args.n_jobs,
        progress=not args.quiet and sys.stderr.isatty(),
        readings=readings,
    )
    if table.skipped:
        what = ", ".join(f"{n} {k}" for k, n in table.skipped.items())
        print(f"skipped documents: {what}", file=sys.stderr)
    return table


def require_rows(table) -> None:
    """A table without judged fields cannot be scored: say why (what was skipped)."""
    if len(table) == 0:
        why = ", ".join(f"{v} {k}" for k, v in table.skipped.items()) or "empty dataset"
        raise DatasetError(f"no judged fields ({why}); check the dataset and --runs")


def add_fusion_params_arg(p: argparse.ArgumentParser, help_tail: str = "") -> None:
    p.add_argument(
        "--fusion-params",
        default=None,
        metavar="JSON",
        help="parameters of the fusion model (confidence.fusion.FusionClassifier) as a JSON "
        'object, e.g. \'{"num_leaves": 7, "lgbm_params": {"extra_trees": true}}\'; '
        "'{\"monotone\": null}' trains without the monotone constraints" + help_tail,
    )


def fusion_params_of(text: str | None) -> dict:
    """``--fusion-params`` as FusionClassifier parameters, checked before any work is done.

    Examples
    --------
    >>> fusion_params_of('{"num_leaves": 7}')
    {'num_leaves': 7}
    >>> fusion_params_of('{"leaves": 7}')
    Traceback (most recent call last):
    ...
    confidence.errors.ExtractConfError: --fusion-params: unknown parameter(s) 'leaves'; ...
    """
    import json

    from confidence.errors import ExtractConfError

    if text is None:
        return {}
    try:
        params = json.loads(text)
    except json.JSONDecodeError as e:
        raise ExtractConfError(
            f"--fusion-params: not JSON ({e.msg} at character {e.pos})"
        ) from None
    if not isinstance(params, dict):
        raise ExtractConfError("--fusion-params: pass a JSON object, e.g. '{\"num_leaves\": 7}'")
    from confidence.fusion import FusionClassifier

    valid = sorted(FusionClassifier().get_params())
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ExtractConfError(
            f"--fusion-params: unknown parameter(s) {', '.join(map(repr, unknown))}; "
            f"the fusion model takes {', '.join(valid)}"
        )
    try:
        FusionClassifier(**params)._validate_params()
    except (TypeError, ValueError) as e:
        raise ExtractConfError(f"--fusion-params: {e}") from None
    return params
