"""Layout families: visibly different ways of arranging the same invoice content.

Each family is a function drawing an :class:`~confidence.datasets.synthetic.values.Invoice` onto a
:class:`~confidence.datasets.synthetic.render.Sheet`; it must place the vendor, customer, meta,
contact, payment, items and totals groups (the kit leaves out absent fields). Families differ in
header/footer placement, column structure, label position (left, above, inline), table rules and
totals emphasis, like the templates of real invoicing software.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from confidence.datasets.synthetic.render import (
    CONTACT_KEYS,
    GREY,
    META_KEYS,
    PAYMENT_KEYS,
    Sheet,
)
from confidence.datasets.synthetic.tables import items_table, totals


@dataclass(frozen=True)
class Family:
    """A layout family: how to draw, on what paper, with which fonts and body sizes."""

    name: str
    draw: Callable[[Sheet], None]
    description: str
    page: str = "locale"  # "locale" = US Letter for en_US, else A4; "receipt" = 80 mm roll
    fonts: tuple[str, ...] = ("Helvetica", "Helvetica", "Helvetica", "Times", "Times", "Courier")
    sizes: tuple[float, float] = (8.5, 10.0)


def _brand(
    sheet: Sheet,
    x: float,
    y: float,
    size: float,
    anchor: str = "l",
    max_w: float = 260.0,
    color=(0, 0, 0),
) -> float:
    """Vendor name as a letterhead, or a graphic logo when the name is absent."""
    name = sheet.inv.gold["vendor_name"]
    if name is None:
        lx = x - 30 if anchor == "r" else x - 15 if anchor == "c" else x
        sheet.logo(lx, y - 8, 30, color=None if color == (0, 0, 0) else color)
        return y - 32
    size = sheet.fit(name, max_w, size, bold=True)
    sheet.text(x, y, name, size=size, bold=True, anchor=anchor, field="vendor_name", color=color)
    return y - size * 1.35


def _vendor_lines(
    sheet: Sheet,
    x: float,
    y: float,
    *,
    anchor: str = "l",
    size=None,
    one_line: bool = False,
    color=(0, 0, 0),
) -> float:
    """Vendor address (if shown) as lines or as one ", "-joined line."""
    if sheet.pair("vendor_address") is None:
        return y
    size = size or sheet.size
    lines = [sheet.inv.gold["vendor_address"]] if one_line else sheet.inv.vendor_lines
    for ln in lines:
        sheet.text(x, y, ln, size=size, anchor=anchor, field="vendor_address", color=color)
        y -= size * 1.3
    return y


def _parties(sheet: Sheet, x: float, y: float, col_w: float, *, titled: bool = True) -> float:
    """Bill-to block, with the ship-to block beside it when the invoice has one."""
    title = sheet.label("@bill_to") if titled else None
    y1 = sheet.address(x, y, "customer", title=title, max_w=col_w - 12)
    if sheet.inv.shipping_lines:
        y2 = sheet.address(
            x + col_w, y, "shipping", title=sheet.label("@ship_to"), max_w=col_w - 12
        )
        y1 = min(y1, y2)
    return y1


def _closing(sheet: Sheet, x: float, y: float, anchor: str = "l") -> float:
    y = sheet.ensure(y, 30)
    sheet.text(x, y - 6, sheet.label("@closing"), size=sheet.size, anchor=anchor, color=GREY)
    return y - 24


# --------------------------------------------------------------------------- families
def classic(sheet: Sheet) -> None:
    W, H, s = sheet.width, sheet.height, sheet.size
    y = _brand(sheet, 45, H - 55, 17)
    y = _vendor_lines(sheet, 45, y)
    y = sheet.kv(45, y - 4, CONTACT_KEYS, mode="inline", size=s * 0.9, colon=True)
    ym = sheet.title(W - 45, H - 55, size=22, anchor="r")
    ym = sheet.kv(W * 0.56, ym - 6, META_KEYS, label_w=W * 0.44 - 45, value_right=W - 45)
    y = _parties(sheet, 45, min(y, ym) - 18, W * 0.45)
    y = items_table(sheet, 45, W - 45, y - 22, sheet.rng.choice(("ruled", "plain")))
    y = totals(sheet, W * 0.56, W - 45, y - 8, "right")
    y = sheet.ensure(y, 90)
    sheet.kv(45, y - 10, PAYMENT_KEYS, label_w=110)


def banner(sheet: Sheet) -> None:
    W, H, s = sheet.width, sheet.height, sheet.size
    sheet.box(0, H - 90, W, 90, fill=sheet.accent, stroke=None)
    white = (1, 1, 1)
    _brand(sheet, 40, H - 50, 20, color=white, max_w=W * 0.55)
    sheet.title(W - 40, H - 50, size=24, anchor="r", color=white)
    y = _vendor_lines(sheet, 40, H - 108, one_line=True, size=s * 0.9, color=GREY)
    y = sheet.kv_line(40, y, CONTACT_KEYS, max_w=W - 80, size=s * 0.9)
    y = _parties(sheet, 40, y - 16, W * 0.4)
    y = sheet.kv_row(40, W - 40, y - 14, META_KEYS)
    y = items_table(sheet, 40, W - 40, y - 10, "zebra")
    y = totals(sheet, W * 0.55, W - 40, y - 8, "bar")
    y = sheet.ensure(y, 60)
    sheet.kv_row(40, W - 40, y - 14, PAYMENT_KEYS, size=s * 0.9)


def letter(sheet: Sheet) -> None:
    """DIN 5008 business letter: sender line over the address window, info block, footer."""
    W, H, s = sheet.width, sheet.height, sheet.size
    sheet.bottom = 100
    _brand(sheet, W - 50, H - 60, 16, anchor="r", max_w=W * 0.45)
    inv = sheet.inv
    sender = [inv.gold["vendor_name"]] if inv.gold["vendor_name"] else []
    if sheet.pair("vendor_address") is not None:
        sender.append(inv.gold["vendor_address"])
        sheet.drawn.add("vendor_address")
    if sender:
        sheet.text(62, H - 140, " · ".join(sender), size=6.5, color=GREY)
        sheet.hline(62, 62 + 230, H - 143, 0.3, GREY)
    y = sheet.address(62, H - 160, "customer", bold_name=False)
    ym = sheet.kv(W - 215, H - 150, META_KEYS, label_w=85, size=s * 0.95)
    y = min(y, ym) - 24
    sheet.text(62, y, f"{sheet.label('@title')}", size=s * 1.4, bold=True)
    y = sheet.paragraph(62, y - 26, [sheet.label("@greeting"), sheet.label("@intro")])
    y = items_table(sheet, 62, W - 50, y - 10, "plain")
    y = totals(sheet, W * 0.55, W - 50, y - 6, "lines")
    y = sheet.kv(62, y - 4, ("payment_terms",), mode="inline", colon=True)
    _closing(sheet, 62, y)
    # Three-column footer (seller / contact / bank) on the last page.
    cols = (62, W * 0.4, W * 0.68)
    fy, fs = 78, 6.8
    if inv.gold["vendor_name"]:
        sheet.text(cols[0], fy, inv.gold["vendor_name"], size=fs, bold=True, field="vendor_name")
    _vendor_lines(sheet, cols[0], fy - fs * 1.3, size=fs)
    sheet.kv(cols[1], fy, CONTACT_KEYS, size=fs, mode="inline", colon=True)
    sheet.kv(cols[2], fy, ("@bank", "iban", "bic", "payment_reference"), size=fs, mode="inline")


def sidebar(sheet: Sheet) -> None:
    W, H, s = sheet.width, sheet.height, sheet.size
    side = 165
    tint = tuple(0.9 + 0.1 * c for c in sheet.accent)

    def paint(sh: Sheet) -> float:
        sh.box(0, 0, side, H, fill=tint, stroke=None)
        return H - 60

    paint(sheet)
    sheet.continuation = paint
    y = _brand(sheet, 20, H - 55, 15, max_w=side - 30)
    y = _vendor_lines(sheet, 20, y - 2, size=s * 0.85)
    y = sheet.kv(20, y - 10, CONTACT_KEYS, mode="above", size=s * 0.85)
    y = sheet.kv(20, y - 10, META_KEYS, mode="above", size=s * 0.9)
    sheet.kv(20, y - 10, PAYMENT_KEYS, mode="above", size=s * 0.8)
    x0 = side + 25
    y = sheet.title(x0, H - 60, size=26, color=sheet.accent)
    y = _parties(sheet, x0, y - 10, (W - x0) * 0.5)
    y = items_table(sheet, x0, W - 35, y - 20, sheet.rng.choice(("grid", "plain", "ruled")))
    y = totals(sheet, W - 250, W - 35, y - 10, "boxed")
    _closing(sheet, x0, y - 10)


def two_column(sheet: Sheet) -> None:
    W, H, s = sheet.width, sheet.height, sheet.size
    y = sheet.title(40, H - 60, size=24)
    y = sheet.kv_row(40, W - 40, y - 6, META_KEYS, boxed=True)
    top = y - 8
    sheet.text(48, top - 14, sheet.label("@from"), size=s * 0.8, color=GREY, bold=True)
    yv = _brand(sheet, 48, top - 30, s * 1.2, max_w=W / 2 - 60)
    yv = _vendor_lines(sheet, 48, yv, size=s * 0.9)
    yv = sheet.kv(48, yv, CONTACT_KEYS, mode="inline", size=s * 0.8, colon=True, step=s * 1.1)
    yc = sheet.address(
        W / 2 + 13, top - 14, "customer", title=sheet.label("@bill_to"), size=s * 0.95
    )
    bottom = min(yv, yc, top - 80)
    for x in (40, W / 2 + 5):
        sheet.box(x, bottom, W / 2 - 45, top - bottom, stroke=GREY, width=0.6, radius=4)
    y = bottom - 16
    if sheet.inv.shipping_lines:
        y = sheet.address(40, y, "shipping", title=sheet.label("@ship_to"), size=s * 0.9) - 6
    y = items_table(sheet, 40, W - 40, y - 10, "grid")
    y = totals(sheet, W * 0.58, W - 40, y - 10, "boxed")
    y = sheet.ensure(y, 80)
    sheet.kv(40, y - 6, PAYMENT_KEYS, label_w=105, size=s * 0.95)


def receipt(sheet: Sheet) -> None:
    """Compact till-receipt-like invoice on an 80 mm roll, monospaced."""
    W, H, s = sheet.width, sheet.height, sheet.size
    x0, x1, cx = 14, W - 14, W / 2
    y = _brand(sheet, cx, H - 30, s * 1.5, anchor="c", max_w=W - 28)
    if sheet.pair("vendor_address") is not None:
        for ln in sheet.inv.vendor_lines:
            sheet.text(cx, y, ln, size=s * 0.95, anchor="c", field="vendor_address")
            y -= s * 1.25
    y = sheet.kv(
        x0,
        y - 4,
        CONTACT_KEYS,
        mode="inline",
        size=s * 0.9,
        colon=True,
        step=s * 1.25,
        max_w=x1 - x0,
    )
    y = sheet.title(cx, y - 10, size=s * 1.5, anchor="c")
    y = sheet.kv(x0, y, META_KEYS, value_right=x1, step=s * 1.3)
    y = sheet.address(x0, y - 6, "customer", title=sheet.label("@bill_to"), size=s, max_w=x1 - x0)
    if sheet.inv.shipping_lines:
        y = sheet.address(
            x0, y - 4, "shipping", title=sheet.label("@ship_to"), size=s, max_w=x1 - x0
        )
    y = items_table(sheet, x0, x1, y - 8, "receipt")
    y = totals(sheet, x0, x1, y, "right")
    y = sheet.kv(
        x0,
        y - 6,
        PAYMENT_KEYS,
        mode="inline",
        size=s * 0.9,
        colon=True,
        step=s * 1.3,
        max_w=x1 - x0,
    )
    _closing(sheet, cx, y, anchor="c")


def centered(sheet: Sheet) -> None:
    W, H, s = sheet.width, sheet.height, sheet.size
    cx = W / 2
    y = _brand(sheet, cx, H - 55, 18, anchor="c", max_w=W - 120)
    y = _vendor_lines(sheet, cx, y, anchor="c", one_line=True, size=s * 0.95)
    y = sheet.kv_line(cx, y, CONTACT_KEYS, max_w=W - 100, anchor="c", size=s * 0.9)
    sheet.hline(50, W - 50, y - 2, 0.6)
    y = sheet.title(cx, y - 30, size=18, anchor="c")
    sheet.hline(50, W - 50, y + 6, 0.6)
    yc = _parties(sheet, 50, y - 16, W * 0.28, titled=True)
    ym = sheet.kv(W * 0.6, y - 16, META_KEYS, label_w=W * 0.4 - 50, value_right=W - 50, colon=True)
    y = items_table(sheet, 50, W - 50, min(yc, ym) - 18, "plain")
    y = totals(sheet, W * 0.58, W - 50, y - 8, "lines")
    y = sheet.ensure(y, 60)
    y = sheet.kv_line(cx, y - 14, PAYMENT_KEYS, max_w=W - 100, anchor="c", size=s * 0.9)
    _closing(sheet, cx, y - 6, anchor="c")


def corporate(sheet: Sheet) -> None:
    """Vendor block top right, logo mark top left, meta inline under a large title."""
    W, H, s = sheet.width, sheet.height, sheet.size
    sheet.logo(45, H - 80, 34)
    y = _brand(sheet, W - 45, H - 50, 14, anchor="r")
    y = _vendor_lines(sheet, W - 45, y, anchor="r", size=s * 0.9)
    y = sheet.kv_line(W - 45, y, CONTACT_KEYS, max_w=W * 0.55, anchor="r", size=s * 0.85)
    y = _parties(sheet, 45, min(y, H - 100) - 20, W * 0.4)
    y = sheet.title(45, y - 24, size=26, color=sheet.accent)
    y = sheet.kv_line(45, y, META_KEYS, max_w=W - 90, size=s)
    y = items_table(sheet, 45, W - 45, y - 16, sheet.rng.choice(("ruled", "shaded")))
    y = totals(sheet, W * 0.55, W - 45, y - 8, "right")
    y = sheet.ensure(y, 90)
    sheet.kv(45, y - 10, PAYMENT_KEYS, label_w=110, size=s * 0.95)


def footer_heavy(sheet: Sheet) -> None:
    """Minimal header; all seller details live in a four-column footer."""
    W, H, s = sheet.width, sheet.height, sheet.size
    sheet.bottom = 110
    _brand(sheet, 45, H - 55, 16)
    sheet.title(W - 45, H - 55, size=20, anchor="r")
    yc = _parties(sheet, 45, H - 110, W * 0.3)
    ym = sheet.kv(W * 0.7, H - 100, META_KEYS, mode="above", size=s)
    y = items_table(sheet, 45, W - 45, min(yc, ym) - 14, "shaded")
    y = totals(sheet, W * 0.56, W - 45, y - 8, "right")
    y = sheet.kv(45, y - 4, ("payment_terms",), mode="inline", colon=True)
    _closing(sheet, 45, y)
    sheet.hline(45, W - 45, 92, 0.5, GREY)
    fs, fy = 6.8, 80
    if sheet.inv.gold["vendor_name"]:
        sheet.text(45, fy, sheet.inv.gold["vendor_name"], size=fs, bold=True, field="vendor_name")
    _vendor_lines(sheet, 45, fy - fs * 1.35, size=fs)
    sheet.kv(W * 0.3, fy, CONTACT_KEYS, mode="above", size=fs, step=fs * 2.3)
    sheet.kv(
        W * 0.55,
        fy,
        ("@bank", "iban", "bic", "payment_reference"),
        mode="inline",
        size=fs,
        colon=True,
    )


def boxed(sheet: Sheet) -> None:
    """Every section in its own captioned, rounded box."""
    W, H, s = sheet.width, sheet.height, sheet.size

    def frame(x: float, top: float, w: float, bottom: float) -> None:
        sheet.box(x, bottom, w, top - bottom, stroke=sheet.accent, width=0.8, radius=6)

    def caption(x: float, y: float, text: str) -> float:
        sheet.text(x + 8, y - 12, text, size=s * 0.8, bold=True, color=sheet.accent)
        return y - 26

    top, half = H - 40, (W - 90) / 2
    y = _brand(sheet, 50, top - 22, 14, max_w=half - 20)
    y = _vendor_lines(sheet, 50, y, size=s * 0.9)
    yl = sheet.kv(50, y, CONTACT_KEYS, mode="inline", size=s * 0.8, colon=True, step=s * 1.15)
    y = caption(50 + half, top, sheet.label("@title"))
    yr = sheet.kv(60 + half, y, META_KEYS, label_w=100, size=s * 0.9, step=s * 1.3)
    bottom = min(yl, yr) - 4
    frame(40, top, half, bottom)
    frame(50 + half, top, half, bottom)
    top = bottom - 10
    y = caption(40, top, sheet.label("@bill_to"))
    yl = sheet.address(50, y, "customer", size=s)
    if sheet.inv.shipping_lines:
        yl = min(
            yl, sheet.address(50 + half, y + 14, "shipping", title=sheet.label("@ship_to"), size=s)
        )
    frame(40, top, W - 80, yl - 4)
    y = items_table(sheet, 40, W - 40, yl - 30, "grid")
    y = totals(sheet, W * 0.58, W - 50, y - 12, "boxed")
    y = sheet.ensure(y, 100)
    y2 = caption(40, y - 6, sheet.label("@payment"))
    y2 = sheet.kv(50, y2, PAYMENT_KEYS, label_w=95, size=s * 0.9, step=s * 1.3)
    frame(40, y - 6, half + 40, y2 + 2)


def minimal(sheet: Sheet) -> None:
    """Airy modern template: big light title, hero amount, labels above values."""
    W, H, s = sheet.width, sheet.height, sheet.size
    sheet.text(50, H - 70, sheet.label("@title"), size=34, color=(0.7, 0.7, 0.72))
    hero = sheet.pair("amount_due") or sheet.pair("amount_total_gross")
    if hero:
        lab, val, field = hero
        sheet.text(W - 50, H - 52, lab, size=s, color=GREY, anchor="r", field=field)
        sheet.text(
            W - 50, H - 76, sheet.inv.money(val), size=20, bold=True, anchor="r", field=field
        )
    y = _brand(sheet, 50, H - 100, s * 1.1)
    y = _vendor_lines(sheet, 50, y, size=s * 0.9, one_line=True, color=GREY)
    y = sheet.kv_line(50, y, CONTACT_KEYS, max_w=W - 100, size=s * 0.85)
    y = sheet.kv_row(50, W - 50, y - 20, META_KEYS)
    y = _parties(sheet, 50, y - 14, W * 0.45)
    y = items_table(sheet, 50, W - 50, y - 30, "plain")
    y = totals(sheet, W * 0.6, W - 50, y - 10, "right")
    y = sheet.ensure(y, 60)
    sheet.kv_row(50, W - 50, y - 20, PAYMENT_KEYS, size=s * 0.9)


def statement(sheet: Sheet) -> None:
    """Form-like: a ruled header band, a meta grid table and a full grid item table."""
    W, H, s = sheet.width, sheet.height, sheet.size
    _brand(sheet, 40, H - 50, 15, max_w=W * 0.5)
    sheet.title(W - 40, H - 50, size=18, anchor="r", color=sheet.accent)
    sheet.hline(40, W - 40, H - 62, 2.0, sheet.accent)
    y = _vendor_lines(sheet, 40, H - 78, one_line=True, size=s * 0.9)
    y = sheet.kv_line(40, y, CONTACT_KEYS, max_w=W - 80, size=s * 0.9)
    y = sheet.kv_row(40, W - 40, y - 14, META_KEYS, boxed=True, size=s * 0.95)
    y = _parties(sheet, 40, y - 8, W * 0.45)
    y = items_table(sheet, 40, W - 40, y - 16, "grid")
    y = totals(sheet, W * 0.55, W - 40, y - 8, sheet.rng.choice(("boxed", "lines")))
    y = sheet.ensure(y, 90)
    sheet.box(40, y - 86, W * 0.5, 80, stroke=GREY)
    sheet.kv(48, y - 20, PAYMENT_KEYS, label_w=100, size=s * 0.9, step=s * 1.35)


def compact(sheet: Sheet) -> None:
    """Dense small-print layout: two key/value columns above a tight table."""
    W, H, s = sheet.width, sheet.height, sheet.size
    y = _brand(sheet, 36, H - 40, 12)
    sheet.title(W - 36, H - 40, size=13, anchor="r")
    yl = _vendor_lines(sheet, 36, y, size=s)
    yl = sheet.kv(36, yl - 2, CONTACT_KEYS, label_w=60, size=s, step=s * 1.3)
    yl = sheet.kv(36, yl - 4, META_KEYS, label_w=80, size=s, step=s * 1.3)
    yr = sheet.address(W * 0.52, y, "customer", title=sheet.label("@bill_to"), size=s)
    if sheet.inv.shipping_lines:
        yr = sheet.address(W * 0.52, yr - 4, "shipping", title=sheet.label("@ship_to"), size=s)
    yr = sheet.kv(W * 0.52, yr - 4, PAYMENT_KEYS, label_w=80, size=s, step=s * 1.3)
    y = items_table(sheet, 36, W - 36, min(yl, yr) - 12, "ruled")
    totals(sheet, W * 0.6, W - 36, y - 4, "lines")


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("classic", classic, "name top-left, meta label-left top-right, ruled table"),
        Family("banner", banner, "coloured header band, meta grid row, zebra table, total bar"),
        Family(
            "letter",
            letter,
            "DIN 5008 letter: sender line, address window, 3-col footer",
            page="a4",
            sizes=(9.0, 10.5),
        ),
        Family("sidebar", sidebar, "tinted left sidebar with seller, meta and bank details"),
        Family("two_column", two_column, "From / Bill-to boxes side by side, grid table"),
        Family(
            "receipt",
            receipt,
            "80 mm till-receipt, monospaced",
            page="receipt",
            fonts=("Courier", "Courier", "Helvetica"),
            sizes=(7.0, 8.0),
        ),
        Family("centered", centered, "centred letterhead, rules, plain table"),
        Family("corporate", corporate, "seller top-right, meta inline under big title"),
        Family("footer_heavy", footer_heavy, "bare header, seller details in a 4-col footer"),
        Family("boxed", boxed, "every section in a captioned rounded box"),
        Family(
            "minimal",
            minimal,
            "airy, hero amount, labels above values",
            sizes=(8.5, 9.5),
            fonts=("Helvetica",),
        ),
        Family("statement", statement, "form-like: meta grid table, full grid items"),
        Family("compact", compact, "dense small print, two key/value columns", sizes=(6.5, 7.5)),
    )
}
"""Registered layout families by name."""
