"""Reading-order lines of a page: word indices grouped into visual lines, top to bottom."""

from __future__ import annotations

from confidence.types import Word

__all__ = ["group_lines"]


def group_lines(words: tuple[Word, ...]) -> list[list[int]]:
    """Visual lines of word indices, top to bottom, each left to right.

    Words are first grouped by ``(block_id, line_id)`` (each word alone when the page has no
    line ids); groups whose vertical centre falls inside the band of the line being built join
    it, so a label column and a value column in different blocks still share a line.

    Examples
    --------
    >>> from confidence.types import Word
    >>> group_lines((Word("b", (0.5, 0.3, 0.6, 0.32)), Word("top", (0.1, 0.1, 0.2, 0.12)),
    ...              Word("a", (0.1, 0.302, 0.2, 0.322))))
    [[1], [2, 0]]
    """
    if not words:
        return []
    boxes = [w.bbox for w in words]
    x0 = [b[0] for b in boxes]
    by_id: dict[tuple[int, int], list[int]] = {}
    for i, w in enumerate(words):
        by_id.setdefault((w.block_id, w.line_id), []).append(i)
    groups = list(by_id.values()) if len(by_id) > 1 else [[i] for i in range(len(words))]
    bands = []
    for g in groups:
        if len(g) == 1:
            _, y0, _, y1 = boxes[g[0]]
        else:
            # Median edges: one tall word or a skewed line does not stretch the band.
            y0 = sorted([boxes[i][1] for i in g])[len(g) // 2]
            y1 = sorted([boxes[i][3] for i in g])[len(g) // 2]
        bands.append((0.5 * (y0 + y1), y0, y1, g))
    bands.sort(key=lambda b: (b[0], x0[b[3][0]]))
    lines: list[list[int]] = []
    top = bot = 0.0
    for mid, y0, y1, g in bands:
        if lines and top <= mid <= bot:
            lines[-1].extend(g)
        else:
            lines.append(list(g))
            top, bot = y0, y1
    for line in lines:
        line.sort(key=x0.__getitem__)
    return lines
