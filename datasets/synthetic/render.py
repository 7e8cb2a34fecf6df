"""Drawing kit for synthetic invoices on a reportlab canvas.

A :class:`Sheet` knows the invoice being drawn and offers the building blocks the layout families
compose: label/value pairs in several arrangements, address blocks, the line-items table (with
page breaks) and the totals block. It applies the per-field non-salient styles (tiny, light grey,
moved to the footer or printed sideways) so every family gets them for free, and it records where
each field was drawn.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Sequence

from reportlab.lib.pagesizes import A4, LETTER
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from confidence.datasets.synthetic.values import Invoice

FONTS: dict[str, tuple[str, str]] = {
    "Helvetica": ("Helvetica", "Helvetica-Bold"),
    "Times": ("Times-Roman", "Times-Bold"),
    "Courier": ("Courier", "Courier-Bold"),
}
BLACK = (0.0, 0.0, 0.0)
GREY = (0.4, 0.4, 0.42)
LIGHT = (0.74, 0.74, 0.76)
PAGE_SIZES = {"a4": A4, "letter": LETTER}

# Non-field keys a Sheet can print as label/value pairs, and when.
_EXTRA_WHEN: dict[str, Callable[[Invoice], bool]] = {
    "@order_date": lambda inv: "order_date" in inv.distractors,
    "@delivery_date": lambda inv: "delivery_date" in inv.distractors,
    "@phone": lambda inv: True,
    "@bank": lambda inv: inv.gold["iban"] is not None,
}

META_KEYS = (
    "document_id",
    "date_issue",
    "@order_date",
    "@delivery_date",
    "customer_id",
    "order_id",
    "date_due",
    "currency",
)
PAYMENT_KEYS = ("@bank", "iban", "bic", "payment_reference", "payment_terms")
CONTACT_KEYS = ("@phone", "vendor_email", "vendor_tax_id")


class Sheet:
    """A canvas plus the invoice being drawn on it; y grows upwards (reportlab points).

    Parameters
    ----------
    inv : Invoice
    page : {"a4", "letter"} or (width, height)
    rng : random.Random
        Source of every styling choice.
    font : {"Helvetica", "Times", "Courier"}
    size : float
        Body font size in points.
    """

    def __init__(self, inv: Invoice, page, rng: random.Random, font: str, size: float):
        self.inv, self.rng, self.font_name, self.size = inv, rng, font, size
        self.width, self.height = PAGE_SIZES[page] if isinstance(page, str) else page
        self.buf = io.BytesIO()
        self.c = Canvas(self.buf, pagesize=(self.width, self.height), invariant=1)
        self.page = 1
        self.positions: dict[str, list[float]] = {}
        self.deferred: list[tuple[str, str, str]] = []
        self.accent = rng.choice(
            (
                (0.13, 0.29, 0.53),
                (0.55, 0.1, 0.12),
                (0.1, 0.4, 0.3),
                (0.25, 0.25, 0.25),
                (0.85, 0.42, 0.0),
            )
        )
        self.continuation: Callable[[Sheet], float] = _default_continuation
        self.drawn: set[str] = set()
        self.min_y = self.height  # lowest baseline drawn so far
        self.bottom = 60.0  # content stops above this; families with a footer raise it
        # layout variants (:data:`LAYOUT_VARIANTS`) drawn by ``synth_document(layout_variety=)``
        self.variants: frozenset[str] = frozenset()

    # ---------------------------------------------------------------- primitives
    def fontname(self, bold: bool = False) -> str:
        return FONTS[self.font_name][int(bold)]

    def text(
        self,
        x: float,
        y: float,
        s: str,
        *,
        size: float | None = None,
        bold: bool = False,
        color=BLACK,
        anchor: str = "l",
        field: str | None = None,
        font: str | None = None,
    ) -> float:
        """Draw one line of text; returns its width. ``anchor`` is "l", "r" or "c"."""
        size = size or self.size
        if field:
            size, color = self._salience(field, size, color)
        fname = font or self.fontname(bold)
        w = stringWidth(s, fname, size)
        x0 = x - w if anchor == "r" else x - w / 2 if anchor == "c" else x
        self.c.setFont(fname, size)
        self.c.setFillColorRGB(*color)
        self.c.drawString(x0, y, s)
        self.min_y = min(self.min_y, y)
        if field:
            self.drawn.add(field)
            self.positions[field] = [self.page, *_bbox(x0, y, w, size, self.width, self.height)]
        return w

    def _salience(self, field: str, size: float, color):
        mode = self.inv.non_salient.get(field)
        if mode == "tiny":
            return 4.6, color
        if mode == "grey":
            return size, LIGHT
        return size, color

    def hline(self, x0: float, x1: float, y: float, width: float = 0.5, color=BLACK) -> None:
        self.c.setStrokeColorRGB(*color)
        self.c.setLineWidth(width)
        self.c.line(x0, y, x1, y)

    def box(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        *,
        fill=None,
        stroke=BLACK,
        width: float = 0.6,
        radius: float = 0.0,
    ) -> None:
        """Rectangle with lower-left corner (x, y)."""
        self.c.setLineWidth(width)
        if fill:
            self.c.setFillColorRGB(*fill)
        if stroke:
            self.c.setStrokeColorRGB(*stroke)
        args = (x, y, w, h)
        draw = dict(fill=int(bool(fill)), stroke=int(bool(stroke)))
        if radius:
            self.c.roundRect(*args, radius, **draw)
        else:
            self.c.rect(*args, **draw)

    def label(self, key: str) -> str:
        return self.inv.labels[key]

    def fit(self, s: str, width: float, size: float, bold: bool = False) -> float:
        """The largest font size <= ``size`` at which ``s`` fits in ``width``."""
        w = stringWidth(s, self.fontname(bold), size)
        return size if w <= width else size * width / w

    def kv_line(
        self,
        x: float,
        y: float,
        keys: Sequence[str],
        *,
        max_w: float,
        size: float | None = None,
        anchor: str = "l",
        gap: float = 16.0,
    ) -> float:
        """Pairs on one line ("Label: value   Label: value"), wrapping at ``max_w``."""
        size = size or self.size
        if "meta_grid" in self.variants and tuple(keys) == META_KEYS:
            x0 = x - max_w if anchor == "r" else x - max_w / 2 if anchor == "c" else x
            return self.kv_grid(x0, x0 + max_w, y, keys, size=size)
        items = [(f"{lab}: ", val, f) for lab, val, f in self.pairs(keys)]
        if not items:
            return y
        fn = self.fontname()

        def width(it):
            return stringWidth(it[0] + it[1], fn, size)

        lines: list[list] = [[]]
        for it in items:
            used = sum(width(i) + gap for i in lines[-1])
            if lines[-1] and used + width(it) > max_w:
                lines.append([])
            lines[-1].append(it)
        for line in lines:
            total = sum(width(i) for i in line) + gap * (len(line) - 1)
            cx = x - total if anchor == "r" else x - total / 2 if anchor == "c" else x
            for lab, val, field in line:
                cx += self.text(cx, y, lab, size=size, color=GREY, field=field)
                cx += self.text(cx, y, val, size=size, field=field) + gap
            y -= size * 1.45
        return y

    # ---------------------------------------------------------------- label / value pairs
    def pair(self, key: str) -> tuple[str, str, str | None] | None:
        """(label, printed value, field name or None) for a key, or None when nothing is drawn.

        Fields moved to the footer or sideways are queued for :meth:`finish` instead.
        """
        inv = self.inv
        if key.startswith("@"):
            if not _EXTRA_WHEN[key](inv):
                return None
            return self.label(key), inv.extras[key[1:]], None
        if key == "currency" and inv.currency_display != "meta":
            return None
        value = inv.gold[key]
        if value is None:
            return None
        if inv.non_salient.get(key) in ("footer", "rotated"):
            if key not in {k for k, _, _ in self.deferred}:
                self.deferred.append((key, self.label(key), value))
            return None
        return self.inv.labels.get(key, ""), value, key

    def pairs(self, keys: Sequence[str]) -> list[tuple[str, str, str | None]]:
        return [p for p in (self.pair(k) for k in keys) if p is not None]

    def kv(
        self,
        x: float,
        y: float,
        keys: Sequence[str],
        *,
        mode: str = "left",
        label_w: float = 90.0,
        size: float | None = None,
        step: float | None = None,
        value_right: float | None = None,
        colon: bool = False,
        bold_label: bool = False,
        max_w: float | None = None,
    ) -> float:
        """Draw label/value pairs from ``y`` downwards; returns the y below the last one.

        ``mode``: "left" (label column, value at ``x + label_w`` or right-aligned at
        ``value_right``), "above" (small grey label over the value) or "inline" ("Label: value").
        """
        size = size or self.size
        if "meta_grid" in self.variants and mode != "above" and tuple(keys) == META_KEYS:
            x1 = value_right if value_right is not None else x + label_w + 150
            return self.kv_grid(x, min(x1, self.width - 30), y, keys, size=size)
        step = step or size * (2.45 if mode == "above" else 1.45)
        for lab, val, field in self.pairs(keys):
            lab_s = f"{lab}:" if colon and not lab.endswith(":") else lab
            if mode == "above":
                self.text(x, y, lab_s, size=size * 0.78, color=GREY, field=field)
                self.text(x, y - size * 1.1, val, size=size, field=field, bold=bold_label)
            elif mode == "inline":
                w = self.text(x, y, lab_s + " ", size=size, color=GREY, field=field)
                if max_w and w + stringWidth(val, self.fontname(), size) > max_w:
                    y -= size * 1.2  # too long for the line: value goes below its label
                    w = 8.0
                self.text(x + w, y, val, size=size, field=field)
            else:
                lw = self.text(x, y, lab_s, size=size, bold=bold_label, field=field)
                if value_right is not None:
                    self.text(value_right, y, val, size=size, anchor="r", field=field)
                else:  # a long synonym pushes its value right rather than overprinting it
                    self.text(x + max(label_w, lw + 6), y, val, size=size, field=field)
            y -= step
        return y

    def kv_row(
        self,
        x0: float,
        x1: float,
        y: float,
        keys: Sequence[str],
        *,
        boxed: bool = False,
        size: float | None = None,
    ) -> float:
        """Pairs side by side across ``x0..x1``: labels on top, values below (a "grid")."""
        size = size or self.size
        items = self.pairs(keys)
        if not items:
            return y
        fn = self.fontname()
        # Cells as wide as their content (plus slack shared out), shrinking the font if needed.
        need = [
            max(stringWidth(lab, fn, size * 0.75), stringWidth(val, fn, size)) + 12
            for lab, val, _ in items
        ]
        if sum(need) > x1 - x0:
            size *= (x1 - x0) / sum(need)
            need = [n * (x1 - x0) / sum(need) for n in need]
        slack = (x1 - x0 - sum(need)) / len(items)
        cx = x0
        for (lab, val, field), n in zip(items, need, strict=True):
            cw = n + slack
            if boxed:
                self.box(cx, y - size * 2.3, cw, size * 3.3, stroke=GREY, width=0.5)
            self.text(cx + 4, y - 2, lab, size=size * 0.75, color=GREY, field=field)
            self.text(cx + 4, y - size * 1.6, val, size=size, field=field)
            cx += cw
        return y - size * 3.8

    def kv_grid(
        self, x0: float, x1: float, y: float, keys: Sequence[str], *, size: float | None = None
    ) -> float:
        """:meth:`kv_row` over as many rows as ``x0..x1`` needs: header labels over values."""
        size = size or self.size
        fn = self.fontname()
        rows: list[list[str]] = [[]]
        used = 0.0
        for key in keys:
            item = self.pair(key)
            if item is None:
                continue
            lab, val, _ = item
            need = max(stringWidth(lab, fn, size * 0.75), stringWidth(val, fn, size)) + 12
            if rows[-1] and used + need > x1 - x0:
                rows.append([])
                used = 0.0
            rows[-1].append(key)
            used += need
        for row in rows:
            if row:
                y = self.kv_row(x0, x1, y, row, size=size)
        return y

    # ---------------------------------------------------------------- blocks
    def address(
        self,
        x: float,
        y: float,
        who: str,
        *,
        title: str | None = None,
        size: float | None = None,
        anchor: str = "l",
        name_size: float | None = None,
        bold_name: bool = True,
        max_w: float = 250.0,
    ) -> float:
        """Name and address lines of "vendor", "customer" or "shipping"; returns y below."""
        size = size or self.size
        inv = self.inv
        if who == "customer" and "untitled_customer" in self.variants:
            title = None  # an address window: name and lines with no "Bill to" over them
        if title:
            self.text(x, y, title, size=size * 0.85, color=GREY, bold=True, anchor=anchor)
            y -= size * 1.4
        if who == "shipping":
            name_field, name, lines, afield = None, None, inv.shipping_lines or [], None
        elif who == "vendor":
            name_field, afield = "vendor_name", "vendor_address"
            name, lines = inv.gold["vendor_name"], inv.vendor_lines
        else:
            name_field, afield = "customer_name", "customer_billing_address"
            name, lines = inv.gold["customer_name"], inv.customer_lines
        if name:
            ns = self.fit(name, max_w, name_size or size * 1.05, bold=bold_name)
            self.text(x, y, name, size=ns, bold=bold_name, anchor=anchor, field=name_field)
            y -= ns * 1.3
        if afield is None or self.pair(afield) is not None:
            for ln in lines:
                ls = self.fit(ln, max_w, size)
                self.text(x, y, ln, size=ls, anchor=anchor, field=afield)
                y -= size * 1.3
        return y

    def logo(self, x: float, y: float, size: float = 26.0, color=None) -> None:
        """A plain graphic mark (no text), as letterheads whose name is only in the logo have."""
        c = self.c
        c.setFillColorRGB(*(color or self.accent))
        shape = self.rng.randrange(3)
        if shape == 0:
            c.circle(x + size / 2, y + size / 2, size / 2, stroke=0, fill=1)
            c.setFillColorRGB(1, 1, 1)
            c.circle(x + size / 2, y + size / 2, size / 4, stroke=0, fill=1)
        elif shape == 1:
            p = c.beginPath()
            p.moveTo(x, y)
            p.lineTo(x + size, y)
            p.lineTo(x + size / 2, y + size)
            p.close()
            c.drawPath(p, stroke=0, fill=1)
        else:
            c.rect(x, y, size * 0.45, size, stroke=0, fill=1)
            c.rect(x + size * 0.55, y, size * 0.45, size * 0.6, stroke=0, fill=1)

    def title(
        self, x: float, y: float, *, size: float = 20.0, anchor: str = "l", color=BLACK
    ) -> float:
        self.text(x, y, self.label("@title"), size=size, bold=True, anchor=anchor, color=color)
        return y - size * 1.2

    def paragraph(
        self, x: float, y: float, lines: Sequence[str], size: float | None = None
    ) -> float:
        size = size or self.size
        for ln in lines:
            self.text(x, y, ln, size=size)
            y -= size * 1.4
        return y

    # ---------------------------------------------------------------- pages
    def ensure(self, y: float, needed: float) -> float:
        """Start a new page when fewer than ``needed`` points remain above the footer."""
        if y - needed >= self.bottom:
            return y
        self.text(
            self.width - 40,
            self.bottom - 14,
            self.label("@continued"),
            size=7,
            color=GREY,
            anchor="r",
        )
        return self.new_page()

    def new_page(self) -> float:
        self._page_footer()
        self.c.showPage()
        self.page += 1
        return self.continuation(self)

    def _page_footer(self) -> None:
        self.text(
            self.width - 30,
            16,
            f"{self.label('@page')} {self.page}",
            size=6.5,
            color=GREY,
            anchor="r",
        )

    def finish(self) -> bytes:
        """Draw the deferred (footer / sideways) fields and return the PDF bytes."""
        footer = [(f, lab, v) for f, lab, v in self.deferred if self.inv.non_salient[f] == "footer"]
        x, y = 30.0, 16.0
        for field, lab, val in footer:
            w = self.text(x, y, f"{lab}: {val}", size=5.5, color=GREY, field=field)
            x += w + 12
            if x > self.width - 150:
                x, y = 30.0, y - 7
        sideways = [
            (f, lab, v) for f, lab, v in self.deferred if self.inv.non_salient[f] == "rotated"
        ]
        if sideways:
            c = self.c
            c.saveState()
            c.translate(self.width - 5, 90)  # glyphs extend left of the rotated baseline
            c.rotate(90)
            ox = 0.0
            for field, lab, val in sideways:
                c.setFont(self.fontname(), 6.5)
                c.setFillColorRGB(*GREY)
                s = f"{lab} {val}"
                c.drawString(ox, 0, s)
                self.drawn.add(field)
                self.positions[field] = [self.page, round(1 - 22 / self.width, 4), 0.0, 1.0, 1.0]
                ox += stringWidth(s, self.fontname(), 6.5) + 20
            c.restoreState()
        if self.page > 1:
            self._page_footer()
        self.c.showPage()
        self.c.save()
        return self.buf.getvalue()

    # ---------------------------------------------------------------- items and totals
    def currency_suffix(self) -> str:
        cur = self.inv.gold["currency"]
        if not cur or self.inv.currency_display != "header":
            return ""
        self.drawn.add("currency")
        return f" ({cur})"

    def pct(self, rate: str) -> str:
        return f"{rate}%" if self.inv.lang == "en" else f"{rate} %"


def _bbox(x0: float, y: float, w: float, size: float, pw: float, ph: float) -> list[float]:
    top, bottom = y + 0.78 * size, y - 0.24 * size
    return [
        round(x0 / pw, 4),
        round(1 - top / ph, 4),
        round((x0 + w) / pw, 4),
        round(1 - bottom / ph, 4),
    ]


def _default_continuation(sheet: Sheet) -> float:
    y = sheet.height - 50
    name = sheet.inv.gold["vendor_name"]
    if name:
        sheet.text(40, y, name, size=sheet.size, bold=True, field="vendor_name")
    sheet.text(sheet.width - 40, y, sheet.label("@title"), size=sheet.size, bold=True, anchor="r")
    sheet.hline(40, sheet.width - 40, y - 8, 0.4, GREY)
    return y - 30
