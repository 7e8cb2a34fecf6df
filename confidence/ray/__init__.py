"""extractconf on Ray Data: the ingest -> extract -> score stages for more than one machine.

Install with ``pip install 'extractconf[ray]'``; ``ray`` is imported only when a function of
this package runs, so ``import confidence.ray`` works without it.

* :func:`~confidence.ray.stages.ingest`, :func:`~confidence.ray.stages.extract` and
  :func:`~confidence.ray.stages.score` are composable stages over a ``ray.data.Dataset`` (put them
  inside your own Ray pipelines); :func:`~confidence.ray.stages.finalize` applies the batch
  verdict once every document is scored;
* :func:`~confidence.ray.pipeline.score_documents` and
  :func:`~confidence.ray.pipeline.score_runs` run the whole job into an output folder of Parquet
  files, resumable (documents already written ok are skipped) and with no document lost or
  duplicated when a worker dies; ``extractconf score --engine ray`` calls them.

The rows are exactly those of the single-process ``extractconf score`` (same columns, same
values). See ``docs/scale.md``.
"""

from __future__ import annotations

from confidence.ray._runtime import init_ray, require_ray
from confidence.ray.pipeline import RayJob, score_documents, score_runs
from confidence.ray.stages import extract, finalize, ingest, score

__all__ = [
    "RayJob",
    "extract",
    "finalize",
    "ingest",
    "init_ray",
    "require_ray",
    "score",
    "score_documents",
    "score_runs",
]
