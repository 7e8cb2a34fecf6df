"""Line-items table and totals block of a synthetic invoice, in several visual styles."""

from __future__ import annotations

from confidence.datasets.synthetic.render import GREY, Sheet

TABLE_STYLES = ("ruled", "plain", "zebra", "grid", "shaded", "receipt")
TOTALS_STYLES = ("right", "boxed", "bar", "lines", "receipt")


def items_table(sheet: Sheet, x0: float, x1: float, y: float, style: str) -> float:
    """Draw the line items from ``y`` downwards, breaking pages as needed; returns y below.

    ``style`` is one of :data:`TABLE_STYLES`.
    """
    if style == "receipt":
        return _receipt_items(sheet, x0, x1, y)
    s = sheet.size
    w = x1 - x0
    with_pos = sheet.rng.random() < 0.5
    # Column right edges (numbers are right-aligned), description left-aligned.
    cols = {"qty": x0 + w * 0.62, "price": x0 + w * 0.81, "amount": x1 - 4}
    desc_x = x0 + (w * 0.07 if with_pos else 4)
    row_h = s * 1.75

    def header(y: float) -> float:
        hs = s * 0.95
        top = y + hs * 1.05
        if style == "shaded":
            sheet.box(x0, y - hs * 0.6, w, hs * 1.9, fill=sheet.accent, stroke=None)
        elif style == "zebra":
            sheet.box(x0, y - hs * 0.6, w, hs * 1.9, fill=(0.88, 0.88, 0.9), stroke=None)
        elif style == "grid":
            sheet.box(x0, y - hs * 0.6, w, hs * 1.9, stroke=(0, 0, 0), width=0.6)
        color = (1, 1, 1) if style == "shaded" else (0, 0, 0)
        if with_pos:
            sheet.text(x0 + 4, y, sheet.label("@col_pos"), size=hs, bold=True, color=color)
        sheet.text(desc_x, y, sheet.label("@col_desc"), size=hs, bold=True, color=color)
        sheet.text(
            cols["qty"], y, sheet.label("@col_qty"), size=hs, bold=True, color=color, anchor="r"
        )
        sheet.text(
            cols["price"], y, sheet.label("@col_price"), size=hs, bold=True, color=color, anchor="r"
        )
        amount_head = sheet.label("@col_amount") + sheet.currency_suffix()
        sheet.text(cols["amount"], y, amount_head, size=hs, bold=True, color=color, anchor="r")
        if style in ("ruled", "plain"):
            sheet.hline(x0, x1, y - hs * 0.6, 0.8)
            if style == "ruled":
                sheet.hline(x0, x1, top, 0.8)
        return y - row_h

    y = header(y)
    for i, item in enumerate(sheet.inv.items, start=1):
        if y - row_h < sheet.bottom + 10:
            y = header(sheet.ensure(y, 1e6))
        if style == "zebra" and i % 2 == 0:
            sheet.box(x0, y - s * 0.6, w, row_h, fill=(0.95, 0.95, 0.96), stroke=None)
        if style == "grid":
            sheet.box(x0, y - s * 0.6, w, row_h, stroke=(0, 0, 0), width=0.4)
        if with_pos:
            sheet.text(x0 + 4, y, str(i), size=s)
        sheet.text(desc_x, y, item.description, size=s)
        sheet.text(cols["qty"], y, item.quantity, size=s, anchor="r")
        sheet.text(cols["price"], y, item.unit_price, size=s, anchor="r")
        sheet.text(cols["amount"], y, item.amount, size=s, anchor="r")
        if style == "ruled":
            sheet.hline(x0, x1, y - s * 0.6, 0.3, GREY)
        y -= row_h
    if style in ("plain", "shaded"):
        sheet.hline(x0, x1, y + row_h - s * 0.6, 0.6)
    return y - s * 0.8


def _receipt_items(sheet: Sheet, x0: float, x1: float, y: float) -> float:
    s = sheet.size
    head = sheet.currency_suffix().strip(" ()")
    if head:
        sheet.text(x1, y, head, size=s, anchor="r")
        y -= s * 1.3
    sheet.text(x0, y, "-" * int((x1 - x0) / (s * 0.6)), size=s)
    y -= s * 1.4
    for item in sheet.inv.items:
        y = sheet.ensure(y, s * 3)
        sheet.text(x0, y, item.description, size=s)
        y -= s * 1.25
        sheet.text(x0 + 12, y, f"{item.quantity} x {item.unit_price}", size=s)
        sheet.text(x1, y, item.amount, size=s, anchor="r")
        y -= s * 1.45
    sheet.text(x0, y, "-" * int((x1 - x0) / (s * 0.6)), size=s)
    return y - s * 1.4


def _total_rows(sheet: Sheet) -> list[tuple[str, str, str | None, bool]]:
    """(label, value, field, emphasised) rows of the totals block, top to bottom."""
    inv = sheet.inv
    g, ex = inv.gold, inv.extras
    rows: list[tuple[str, str, str | None, bool]] = []
    if "subtotal" in inv.distractors:
        rows.append((sheet.label("@subtotal"), inv.money(ex["subtotal"]), None, False))
        rows.append((sheet.label("@discount"), inv.money(ex["discount"]), None, False))
    if g["amount_total_net"] is not None:
        rows.append(
            (
                sheet.label("amount_total_net"),
                inv.money(g["amount_total_net"]),
                "amount_total_net",
                False,
            )
        )
    tax_shown = sheet.pair("amount_total_tax")
    if tax_shown:
        lab = sheet.label("amount_total_tax")
        if g["tax_rate"] is not None:
            lab = f"{lab} {sheet.pct(g['tax_rate'])}"
        rows.append((lab, inv.money(g["amount_total_tax"]), "amount_total_tax", False))
    elif g["tax_rate"] is not None:
        rows.append((sheet.label("tax_rate"), sheet.pct(g["tax_rate"]), "tax_rate", False))
    if g["amount_total_gross"] is not None:
        rows.append(
            (
                sheet.label("amount_total_gross"),
                inv.money(g["amount_total_gross"]),
                "amount_total_gross",
                g["amount_due"] is None,
            )
        )
    if "prepayment" in inv.distractors:
        rows.append((sheet.label("@prepaid"), inv.money(ex["prepaid"]), None, False))
    if g["amount_due"] is not None:
        rows.append((sheet.label("amount_due"), inv.money(g["amount_due"]), "amount_due", True))
    return rows


def totals(sheet: Sheet, x0: float, x1: float, y: float, style: str) -> float:
    """Draw the totals block between ``x0`` and ``x1`` from ``y`` down; returns y below.

    ``style`` is one of :data:`TOTALS_STYLES`.
    """
    s = sheet.size
    rows = _total_rows(sheet)
    step = s * 1.6
    y = sheet.ensure(y, step * (len(rows) + 1) + 20)
    if sheet.inv.gold["tax_rate"] is not None and sheet.pair("amount_total_tax"):
        sheet.drawn.add("tax_rate")  # printed inside the tax row's label
    if sheet.inv.gold["currency"] and sheet.inv.currency_display == "amounts" and rows:
        sheet.drawn.add("currency")
    if style == "boxed":
        h = sum(step * (1.15 if r[3] else 1.0) for r in rows) + s * 0.2
        sheet.box(x0 - 6, y - h + s * 1.2, x1 - x0 + 12, h, stroke=sheet.accent, width=1.0)
    for lab, val, field, strong in rows:
        if strong and style == "bar":
            sheet.box(x0 - 6, y - s * 0.6, x1 - x0 + 12, s * 1.9, fill=sheet.accent, stroke=None)
            color = (1, 1, 1)
        else:
            color = (0, 0, 0)
        if strong and style == "lines":
            sheet.hline(x0, x1, y + s * 1.1, 0.8)
        size = s * (1.15 if strong else 1.0)
        sheet.text(x0, y, lab, size=size, bold=strong, color=color, field=field)
        sheet.text(x1, y, val, size=size, bold=strong, color=color, anchor="r", field=field)
        if strong and style == "lines":
            sheet.hline(x0, x1, y - s * 0.55, 0.8)
            sheet.hline(x0, x1, y - s * 0.75, 0.8)
        y -= step * (1.15 if strong else 1.0)
    return y - s * 0.5
