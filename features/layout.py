"""Layout features (``lay_*``): where the reported value sits and what surrounds it.

Position and size are normalised page units (:mod:`confidence.types` convention). Font size is
relative to the page's median word font size. The label is the nearest label-like word left of
the value on its line, else the nearest above it
(:meth:`~confidence.documents.page_index.PageIndex.nearest_label`); ``lay_label_left`` is 1 for
left, 0 for above. ``lay_in_table`` is the share of the value's words that are numeric cells of
aligned number columns (:attr:`~confidence.documents.page_index.PageIndex.table_cells`).
``lay_line_rank`` is the value's first line in reading order scaled to 0 (top) - 1 (bottom).
All NaN when the value was not found.
"""

from __future__ import annotations

import math

from confidence.documents.page_index import Label, Match
from confidence.documents.search import DocumentIndex

__all__ = ["NAMES", "values"]

NAMES: tuple[str, ...] = (
    "lay_x_center",
    "lay_y_center",
    "lay_width",
    "lay_height",
    "lay_page_index",
    "lay_font_rel",
    "lay_label_distance",
    "lay_label_dx",
    "lay_label_dy",
    "lay_label_left",
    "lay_in_table",
    "lay_line_rank",
    "lay_n_lines",
    "lay_n_words",
)
_NAN = math.nan


def values(index: DocumentIndex, match: Match | None, label: Label | None) -> list[float]:
    """Feature values in :data:`NAMES` order."""
    if match is None:
        return [_NAN] * len(NAMES)
    page = index.pages[match.page]
    x0, y0, x1, y1 = match.bbox
    sizes = [page.words[i].font_size for i in match.indices]
    sizes = [s for s in sizes if s is not None and s > 0]
    font_rel = (
        (sum(sizes) / len(sizes)) / page.median_font
        if sizes and page.median_font == page.median_font
        else _NAN
    )
    if label is None:
        lab = [_NAN, _NAN, _NAN, _NAN]
    else:
        lab = [label.distance, label.dx, label.dy, float(label.direction == "left")]
    cells = page.table_cells
    idx = match.indices
    lines = {page.line_of[i] for i in idx}
    return [
        (x0 + x1) / 2,
        (y0 + y1) / 2,
        x1 - x0,
        y1 - y0,
        float(match.page),
        font_rel,
        *lab,
        int(cells[list(idx)].sum()) / len(idx),
        min(lines) / max(len(page.lines) - 1, 1),
        float(len(lines)),
        float(len(match.indices)),
    ]
