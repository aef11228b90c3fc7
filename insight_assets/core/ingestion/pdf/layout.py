"""Reading order of a page's text blocks: two-column pages read left column then right."""

from __future__ import annotations

import bisect

# A block counts as belonging to one column when at most this share of its width crosses the page's
# vertical midline; otherwise it spans both columns (title, full-width figure, centred page number).
_COLUMN_OVERHANG = 0.1
# A page is read as two columns only when each side holds at least this share of the text.
_MIN_COLUMN_SHARE = 0.2


def reading_order(blocks: list[tuple], midline: float) -> list[tuple]:
    """Text blocks (``page.get_text("blocks")`` tuples) in reading order.

    On a two-column page, blocks that span the midline cut the page into horizontal bands; each band
    is read left column top to bottom, then right column. Other pages keep PyMuPDF's order, which
    follows the content stream and is right for single-column layouts.
    """
    left, right, spanning = [], [], []
    for block in blocks:
        x0, x1 = block[0], block[2]
        width = max(x1 - x0, 1e-6)
        on_left = max(0.0, min(x1, midline) - x0)
        on_right = max(0.0, x1 - max(x0, midline))
        if on_right <= _COLUMN_OVERHANG * width:
            left.append(block)
        elif on_left <= _COLUMN_OVERHANG * width:
            right.append(block)
        else:
            spanning.append(block)
    total = sum(len(block[4]) for block in blocks)
    if min(sum(len(b[4]) for b in left), sum(len(b[4]) for b in right)) < _MIN_COLUMN_SHARE * total:
        return blocks

    spanning.sort(key=lambda b: (b[1], b[0]))
    cuts = [(b[1] + b[3]) / 2 for b in spanning]
    bands: list[tuple[list[tuple], list[tuple]]] = [([], []) for _ in range(len(spanning) + 1)]
    for side, column in ((0, left), (1, right)):
        for block in column:
            bands[bisect.bisect_left(cuts, (block[1] + block[3]) / 2)][side].append(block)
    ordered: list[tuple] = []
    for index, (band_left, band_right) in enumerate(bands):
        ordered.extend(sorted(band_left, key=lambda b: (b[1], b[0])))
        ordered.extend(sorted(band_right, key=lambda b: (b[1], b[0])))
        if index < len(spanning):
            ordered.append(spanning[index])
    return ordered
