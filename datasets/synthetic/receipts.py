"""Synthetic till receipts with a four-field schema (``extractconf synth --kind receipt``).

A second document kind beside the invoices, so that a confidence model trained on synthetic data
has seen what sets receipts apart: a short schema, unlabelled merchant name and address in a
centred header (addresses of two to four lines), a narrow roll whose every line spans most of the
width, many amounts close to the total (subtotal, tax, rounding, cash, change) and thermal-print
scans. Content is drawn from a seeded :class:`random.Random` with Faker in English, German and
French locales; the gold values are the printed strings, as for the invoices (the address joins
its printed lines with ``", "``; the total is printed without its currency sign).
"""

from __future__ import annotations

import datetime as dt
import io
import random
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

from confidence.datasets.synthetic import locales as L
from confidence.datasets.synthetic.degrade import scan
from confidence.datasets.synthetic.generate import SynthDocument
from confidence.datasets.synthetic.values import PRODUCTS, _faker
from confidence.errors import DatasetError
from confidence.schema import Field, Schema

RECEIPT_SCHEMA = Schema(
    "synthetic_receipt",
    (
        Field("merchant_name", "text", "Name of the shop or company that issued the receipt."),
        Field("merchant_address", "address", "Postal address of the shop."),
        Field("purchase_date", "date", "Date of the purchase."),
        Field("total", "amount", "Total amount paid, tax included."),
    ),
)
"""The schema written to ``schema.json`` for ``--kind receipt``."""

RECEIPT_ABSENCE: dict[str, float] = {
    "merchant_name": 0.06,  # logo-only header
    "merchant_address": 0.12,
    "purchase_date": 0.05,
    "total": 0.0,
}
"""Probability that a field is left off a receipt."""

WIDTH = 226.8  # 80 mm roll
SCAN_DPI = (150, 200, 250, 300, 300)
CENT = Decimal("0.01")

_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "title": ("TAX INVOICE", "RECEIPT", "SALES RECEIPT", "SIMPLIFIED TAX INVOICE", "CASH BILL"),
        "date": ("Date:", "Date", "DATE :", "Dt:"),
        "time": ("Time:", "", "TIME :"),
        "receipt": ("Receipt #:", "Bill No:", "Invoice No:", "Trans:", "Doc No:"),
        "cashier": ("Cashier:", "Served by:", "Operator:", "Counter:"),
        "subtotal": ("Subtotal", "SUB TOTAL", "Sub-total", "Total Excl. Tax"),
        "tax": ("Tax", "VAT", "GST", "Sales Tax"),
        "rounding": ("Rounding", "Round Adj", "Rounding Adj"),
        "total": ("TOTAL", "Total", "TOTAL DUE", "Total Incl. Tax", "GRAND TOTAL", "NET TOTAL"),
        "cash": ("CASH", "Cash", "Tendered", "VISA", "Card"),
        "change": ("CHANGE", "Change", "Change Due"),
        "phone": ("Tel:", "Tel", "Phone:", "TEL :"),
        "taxid": ("VAT No:", "GST ID:", "Tax ID:", "Reg No:"),
        "thanks": ("Thank you! Please come again", "THANK YOU", "Goods sold are not returnable",
                   "Keep this receipt for returns"),
        "items": ("Item(s):", "Qty:", "No. of items:"),
    },
    "de": {
        "title": ("KASSENBON", "Rechnung", "Quittung", "BELEG"),
        "date": ("Datum:", "Datum", "Dat.:"),
        "time": ("Uhrzeit:", "", "Zeit:"),
        "receipt": ("Bon-Nr.:", "Beleg-Nr.:", "Bon:"),
        "cashier": ("Kasse:", "Es bediente Sie:", "Kassierer:"),
        "subtotal": ("Zwischensumme", "Summe netto", "Netto"),
        "tax": ("MwSt", "USt.", "MwSt."),
        "rounding": ("Rundung",),
        "total": ("SUMME", "Summe", "GESAMT", "Gesamtbetrag", "ZU ZAHLEN"),
        "cash": ("BAR", "Gegeben", "EC-Karte", "Bar"),
        "change": ("Rückgeld", "ZURÜCK", "Wechselgeld"),
        "phone": ("Tel.:", "Tel", "Telefon:"),
        "taxid": ("USt-IdNr.:", "St.-Nr.:", "UID:"),
        "thanks": ("Vielen Dank für Ihren Einkauf!", "Danke und auf Wiedersehen"),
        "items": ("Anzahl Artikel:", "Artikel:"),
    },
    "fr": {
        "title": ("TICKET DE CAISSE", "FACTURE", "Ticket", "REÇU"),
        "date": ("Date :", "Le", "Date"),
        "time": ("Heure :", "", "à"),
        "receipt": ("Ticket n°", "N° :", "Transaction :"),
        "cashier": ("Caisse :", "Vendeur :", "Caissier :"),
        "subtotal": ("Sous-total", "Total HT", "SOUS TOTAL"),
        "tax": ("TVA", "dont TVA", "T.V.A."),
        "rounding": ("Arrondi",),
        "total": ("TOTAL", "Total TTC", "TOTAL TTC", "A PAYER", "Net à payer"),
        "cash": ("ESPECES", "CB", "Espèces", "Carte bancaire"),
        "change": ("RENDU", "Rendu monnaie", "A rendre"),
        "phone": ("Tél :", "Tel.", "Téléphone :"),
        "taxid": ("SIRET :", "N° TVA :", "TVA intra :"),
        "thanks": ("Merci de votre visite", "A bientôt !", "MERCI ET A BIENTOT"),
        "items": ("Nb articles :", "Articles :"),
    },
}  # fmt: skip
_UNITS = {
    "en": ("Unit {n}", "Level {n}", "Lot {n}", "Shop {n}", "Suite {n}", "No. {n}"),
    "de": ("Laden {n}", "Haus {n}", "Geschäft {n}"),
    "fr": ("Local {n}", "Bât. {n}", "Lot {n}"),
}
_MALLS = {
    "en": ("{c} Shopping Centre", "{c} Retail Park", "{c} Mall", "{c} Plaza", "Market Square"),
    "de": ("{c} Einkaufszentrum", "{c} Arkaden", "Marktplatz", "{c} Center"),
    "fr": ("Centre commercial {c}", "Galerie {c}", "Zone commerciale {c}"),
}
_SHOP_KINDS = {
    "en": ("Hardware", "Stationery", "Bakery", "Pharmacy", "Mini Market", "Restaurant", "Cafe",
           "Trading", "Enterprise", "Supplies", "Store"),
    "de": ("Bäckerei", "Apotheke", "Markt", "Getränke", "Bistro", "Handel", "Drogerie"),
    "fr": ("Boulangerie", "Pharmacie", "Épicerie", "Brasserie", "Quincaillerie", "Tabac Presse"),
}  # fmt: skip


@dataclass
class _Line:
    text: str
    align: str = "l"  # "l", "c", or "lr" (text + right-aligned ``right``)
    _: KW_ONLY
    right: str = ""
    size: float = 1.0  # relative to the body size
    bold: bool = False
    field: str | None = None  # the gold field this line prints (left part for "lr")
    right_field: str | None = None


def _merchant(fake, rng: random.Random, lang: str) -> str:
    r = rng.random()
    if r < 0.45:
        name = fake.company()
    elif r < 0.8:
        name = f"{fake.last_name()} {rng.choice(_SHOP_KINDS[lang])}"
    else:
        name = f"{rng.choice(_SHOP_KINDS[lang])} {fake.city()}"
    return name.upper() if rng.random() < 0.6 else name


def _address(fake, rng: random.Random, lang: str) -> list[str]:
    lines = fake.address().split("\n")
    lines = [ln for ln in lines if ln.strip()]
    if rng.random() < 0.45:
        unit = rng.choice(_UNITS[lang]).format(n=rng.randint(1, 240))
        if rng.random() < 0.5:
            unit += ", " + rng.choice(_MALLS[lang]).format(c=fake.last_name())
        lines.insert(0, unit)
    if rng.random() < 0.25:
        lines.append(fake.country() if rng.random() < 0.3 else fake.city())
    if rng.random() < 0.3 and len(lines) >= 2:  # two short lines printed as one
        lines = [f"{lines[0]}, {lines[1]}", *lines[2:]]
    return lines[:4]


HEADER_STYLES: dict[str, str] = {
    "plain": "the name on one line, a registration number (if any) on its own line below",
    "wrapped": "a name of two or more words wrapped over two centred lines (gold: the whole name)",
    "tagged": "the registration number in brackets after the name on its line (gold: the name)",
}
"""How the merchant's name is printed. ``header_variety`` is the share of receipts drawn with one
of the non-plain styles: letterheads of real till printers wrap long names on the narrow roll and
print the company number beside the name. The default (0) is the plain style only, so seeded
corpora made before the styles existed are reproduced byte for byte."""

NAME_PRINTS: dict[str, str] = {
    "large": "the name larger than the body text and bold (1.3-1.8 times the body size)",
    "body": "the name at the body text's size, bold or regular: many tills print the whole "
    "header in one font",
    "logo": "a printed logo above the name (a short run of large glyphs that OCR reads as "
    "stray letters and signs), the name in either of the other prints",
}
"""How large the merchant's name is printed. ``name_variety`` is the share of receipts drawn
with the ``body`` print (half of them with a ``logo`` line above too); the default (0) prints
every name ``large``, so corpora made before the option existed are reproduced byte for byte."""

_LOGO_GLYPHS = "@#&%*~^=+<>{}[]()|/\\§¤ƒ¥£©®ЖЩЮ◆●■▲★"  # what OCR makes of a drawn logo

ADDRESS_PRINTS: dict[str, str] = {
    "lines": "one address line per printed line, as the locale's address has them",
    "comma_ends": "every printed line but the last ends in a comma, and half of the addresses "
    "are one comma-separated run wrapped at its commas to 16-30 characters (up to six lines): "
    "a run-on address wrapped on the narrow roll (gold: the printed lines joined with ', ', "
    "without their trailing commas)",
}
"""How the merchant's address is printed. ``address_variety`` is the share of receipts drawn
with the ``comma_ends`` print: many till printers print the address as one comma-separated run
broken over short lines, so a reading that stops one line early ends in a comma. The default (0)
prints every address as its lines, so corpora made before the option existed are reproduced
byte for byte."""


TOTAL_STYLES: dict[str, str] = {
    "plain": "subtotal, tax, rounding and total lines under the captions of the locale table",
    "summary": "tax-qualified captions ('Total excl. tax' before the tax line, 'Total incl. tax' "
    "on the total) and, after the payment lines, a tax summary table: one row per rate with its "
    "net and tax amounts and a 'Total' row of the net and tax columns (the gold total is the "
    "tax-included total above, never that row)",
}
"""How the totals block is printed. ``total_variety`` is the share of receipts drawn with the
``summary`` style: till printers in VAT and GST countries print the subtotal under a tax-qualified
caption and end the receipt with a table of the tax by rate, whose ``Total`` row sums the net
amounts, so a ``Total`` caption alone does not say which amount is the total paid. The default
(0) draws nothing extra, so seeded corpora made before the style existed are reproduced byte for
byte."""

_SUMMARY_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "net": ("Total excl. tax", "Total (excl. VAT)", "Total excluding GST", "Total before tax",
                "Sales total excl. tax"),
        "gross": ("Total incl. tax", "Total (incl. VAT)", "Total including GST",
                  "Sales total incl. tax", "Total inclusive of tax"),
        "title": ("TAX SUMMARY", "VAT SUMMARY", "GST SUMMARY", "Tax breakdown"),
        "head": (("Code Rate", "Net Tax"), ("Rate", "Amount Tax"), ("VAT %", "Net VAT")),
        "code": ("A", "S", "T1", "SR", "V"),
        "total": ("Total", "TOTAL", "Total:"),
    },
    "de": {
        "net": ("Summe netto", "Gesamt ohne MwSt.", "Summe exkl. MwSt."),
        "gross": ("Summe inkl. MwSt.", "Gesamt inkl. MwSt.", "Gesamtbetrag brutto"),
        "title": ("MwSt-Übersicht", "Steuerübersicht", ""),
        "head": (("MwSt-Satz", "Netto MwSt"), ("Satz", "Netto Steuer")),
        "code": ("A", "B", "1"),
        "total": ("Summe", "Gesamt", "Total"),
    },
    "fr": {
        "net": ("Total HT", "Montant total HT", "Total hors taxes"),
        "gross": ("Total TTC", "Montant total TTC", "Total toutes taxes comprises"),
        "title": ("DETAIL TVA", "Récapitulatif TVA", ""),
        "head": (("Taux", "HT TVA"), ("Code Taux", "Base TVA")),
        "code": ("A", "1", "T"),
        "total": ("Total", "TOTAL"),
    },
}  # fmt: skip
"""Captions of the ``summary`` total style per language (:data:`TOTAL_STYLES`)."""


def _name_lines(name: str, style: str, reg: str, size: float, bold: bool = True) -> list[_Line]:
    words = name.split()
    if style == "wrapped":
        cut = min(range(1, len(words)), key=lambda k: abs(len(" ".join(words[:k])) - len(name) / 2))
        return [
            _Line(" ".join(words[:cut]), "c", size=size, bold=bold, field="merchant_name"),
            _Line(" ".join(words[cut:]), "c", size=size, bold=bold, field="merchant_name"),
        ]
    if style == "tagged":
        return [
            _Line(f"{name} ({reg})", "c", size=min(size, 1.3), bold=bold, field="merchant_name")
        ]
    return [_Line(name, "c", size=size, bold=bold, field="merchant_name")]


def _address_lines(addr: list[str], ar: random.Random | None, variety: float) -> list[str]:
    """The printed lines of an address (:data:`ADDRESS_PRINTS`); ``addr`` as in the gold."""
    if ar is None or ar.random() >= variety:
        return addr
    lines = addr
    if ar.random() < 0.5:  # one comma-separated run, wrapped at its commas to a narrow width
        width, lines = ar.randint(16, 30), []
        for part in (p.strip() for a in addr for p in a.split(",") if p.strip()):
            if lines and len(lines[-1]) + len(part) + 2 <= width:
                lines[-1] = f"{lines[-1]}, {part}"
            else:
                lines.append(part)
        lines = lines[:6]
    return [f"{a}," for a in lines[:-1]] + lines[-1:]


def _logo_line(nr: random.Random) -> _Line:
    """A line standing for a printed logo: a few large glyphs, as OCR reads a drawn mark."""
    glyphs = "".join(nr.choice(_LOGO_GLYPHS + "ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(12))
    text = " ".join(glyphs[i : i + nr.randint(1, 4)] for i in range(0, nr.randint(3, 12), 4))
    return _Line(text.strip() or "@", "c", size=nr.choice((1.8, 2.2, 2.6)), bold=True)


def _content(
    rng: random.Random,
    lang: str,
    header_variety: float = 0.0,
    total_variety: float = 0.0,
    name_variety: float = 0.0,
    address_variety: float = 0.0,
) -> tuple[list[_Line], dict[str, str | None], dict]:
    """The printed lines of one receipt, its gold values and facts for ``meta``."""
    # Styles draw from their own stream, and only when asked, so the plain corpora stay as made.
    vr = random.Random(rng.getrandbits(32)) if header_variety > 0 else None
    style = "plain"
    if vr is not None and vr.random() < header_variety:
        style = vr.choice(("wrapped", "tagged"))
    tr = random.Random(rng.getrandbits(32)) if total_variety > 0 else None
    summary = _SUMMARY_WORDS[lang] if tr is not None and tr.random() < total_variety else None
    nr = random.Random(rng.getrandbits(32)) if name_variety > 0 else None
    name_print = "body" if nr is not None and nr.random() < name_variety else "large"
    logo = name_print == "body" and nr is not None and nr.random() < 0.5
    ar = random.Random(rng.getrandbits(32)) if address_variety > 0 else None
    locale = rng.choice(L.FAKER_LOCALES[lang])
    fake = _faker(locale)
    fake.seed_instance(rng.getrandbits(32))
    w = _WORDS[lang]
    numbers = L.NUMBER_STYLES[lang][0] if rng.random() < 0.8 else rng.choice(L.NUMBER_STYLES[lang])
    pattern = rng.choice(L.DATE_PATTERNS[locale])
    code, symbol = L.CURRENCIES[locale]
    cur = rng.choice(("", "", symbol, code))

    def num(x: Decimal) -> str:
        return L.format_number(x, numbers)

    def money(x: Decimal) -> str:
        s = num(x)
        return f"{cur}{s}" if cur in ("$", "£") else f"{s} {cur}" if cur else s

    gold: dict[str, str | None] = {}
    name = _merchant(fake, rng, lang)
    if style == "wrapped" and " " not in name:
        style = "plain"
    addr = _address(fake, rng, lang)
    day = dt.date(2017, 1, 1) + dt.timedelta(days=rng.randint(0, 2900))
    date_s = L.format_date(day, pattern, lang)
    gold["merchant_name"] = name
    printed = _address_lines(addr, ar, address_variety)
    comma_ends = printed is not addr
    if comma_ends:  # broken at its commas, the gold keeps every printed part
        addr = [a.rstrip(",") for a in printed]
    gold["merchant_address"] = ", ".join(addr)
    gold["purchase_date"] = date_s
    absent = {f for f, p in RECEIPT_ABSENCE.items() if rng.random() < p}

    lines: list[_Line] = []
    if "merchant_name" not in absent:
        size = rng.choice((1.3, 1.5, 1.8))
        reg = fake.bothify("#######-?").upper() if style == "tagged" else ""
        bold = True
        if name_print == "body":
            size, bold = 1.0, nr.random() < 0.5
            if logo:
                lines.append(_logo_line(nr))
        lines += _name_lines(name, style, reg, size, bold)
    else:
        lines.append(
            _Line(rng.choice(("*** WELCOME ***", "~ ~ ~", "[LOGO]")), "c", size=1.4, bold=True)
        )
    if rng.random() < 0.5 and style != "tagged":
        lines.append(_Line(f"({fake.bothify('#######-?').upper()})", "c", size=0.9))
    if "merchant_address" not in absent:
        lines += [_Line(a, "c", size=0.95, field="merchant_address") for a in printed]
    if rng.random() < 0.8:
        lines.append(_Line(f"{rng.choice(w['phone'])} {fake.phone_number()}", "c", size=0.9))
    if rng.random() < 0.6:
        lines.append(_Line(f"{rng.choice(w['taxid'])} {fake.bothify('#########???').upper()}", "c"))
    lines.append(_Line(""))
    if rng.random() < 0.7:
        lines.append(_Line(rng.choice(w["title"]), "c", size=1.1, bold=True))
    time_s = f"{rng.randint(7, 22):02d}:{rng.randint(0, 59):02d}"
    if rng.random() < 0.3:
        time_s += f":{rng.randint(0, 59):02d}"
    no = f"{rng.choice(w['receipt'])} {rng.randint(1000, 999999)}"
    date_label = rng.choice(w["date"])
    time_label = rng.choice(w["time"])
    dt_text = f"{date_label} {date_s}" + (f" {time_label} {time_s}".rstrip() if time_s else "")
    order = rng.random()
    if "purchase_date" in absent:
        lines.append(_Line(no))
    elif order < 0.4:
        lines.append(_Line(dt_text, field="purchase_date"))
        lines.append(_Line(no))
    elif order < 0.7:
        lines.append(_Line(no))
        lines.append(_Line(dt_text, field="purchase_date"))
    else:
        lines.append(_Line(no, "lr", right=f"{date_s} {time_s}", right_field="purchase_date"))
    if rng.random() < 0.6:
        lines.append(_Line(f"{rng.choice(w['cashier'])} {fake.first_name()}"))
    lines.append(_Line("-" * 40))

    products = PRODUCTS[lang]
    n_items = rng.choice((1, 1, 2, 2, 3, 3, 4, 5, 6, 8, 12))
    subtotal = Decimal(0)
    for _ in range(n_items):
        desc, lo, hi = rng.choice(products)
        price = (Decimal(rng.randint(lo * 20, hi * 20)) / 100 / rng.choice((1, 4, 10))).quantize(
            CENT
        )
        qty = rng.choice((1, 1, 1, 2, 3))
        amount = price * qty
        subtotal += amount
        if rng.random() < 0.5:
            lines.append(_Line(desc[:28].upper() if rng.random() < 0.5 else desc[:28]))
            lines.append(_Line(f"  {qty} x {num(price)}", "lr", right=num(amount)))
        else:
            lines.append(_Line(f"{qty} {desc[:22]}", "lr", right=num(amount)))
    lines.append(_Line("-" * 40))
    rate = Decimal(rng.choice(("0", "5", "6", "7", "10", "19", "20")))
    included = rng.random() < 0.6  # prices include tax: total = subtotal
    tax = (subtotal * rate / (100 + rate if included else 100)).quantize(CENT, ROUND_HALF_UP)
    total = subtotal if included else subtotal + tax
    rounding = Decimal(0)
    if rng.random() < 0.2:
        rounded = (total * 20).quantize(Decimal(1), ROUND_HALF_UP) / 20
        rounding, total = rounded - total, rounded.quantize(CENT)
    net = subtotal - tax if included else subtotal
    if summary is not None and tr is not None:  # the net under a tax-qualified "Total" caption
        lines.append(_Line(tr.choice(summary["net"]), "lr", right=num(net)))
    elif not included or rng.random() < 0.5:
        lines.append(_Line(rng.choice(w["subtotal"]), "lr", right=num(subtotal)))
    if rate and rng.random() < 0.75:
        lines.append(_Line(f"{rng.choice(w['tax'])} {rate}%", "lr", right=num(tax)))
    if rounding:
        lines.append(_Line(rng.choice(w["rounding"]), "lr", right=num(rounding)))
    gold["total"] = num(total)
    total_caption = rng.choice(w["total"])
    if summary is not None and tr is not None and tr.random() < 0.7:
        total_caption = tr.choice(summary["gross"])
    lines.append(
        _Line(
            total_caption,
            "lr",
            right=money(total) if rng.random() < 0.5 else num(total),
            size=rng.choice((1.0, 1.15, 1.3)),
            bold=rng.random() < 0.7,
            right_field="total",
        )
    )
    paid = total
    if rng.random() < 0.7:
        paid = Decimal(rng.choice((5, 10, 20, 50, 100))) * ((total // 5) // 10 + 1)
        paid = max(paid, total.quantize(Decimal(1)) + 1)
        lines.append(_Line(rng.choice(w["cash"]), "lr", right=num(paid)))
        lines.append(_Line(rng.choice(w["change"]), "lr", right=num(paid - total)))
    if rng.random() < 0.5:
        lines.append(_Line(f"{rng.choice(w['items'])} {n_items}"))
    if summary is not None and tr is not None:
        lines += _tax_table(tr, summary, rate, net, tax, num)
    lines.append(_Line(""))
    for _ in range(rng.choice((1, 1, 2))):
        lines.append(_Line(rng.choice(w["thanks"]), "c", size=0.9))
    for f in absent:
        gold[f] = None
    facts = {
        "language": lang,
        "locale": locale,
        "n_items": n_items,
        "date_order": "ymd"
        if pattern.startswith("{yyyy}")
        else "mdy"
        if locale == "en_US"
        else "dmy",
        "absent": sorted(absent),
        "normalized": {"purchase_date": day.isoformat(), "total": f"{total:.2f}"},
        "tax_included": included,
    }
    if vr is not None:
        facts["header_style"] = style
    if tr is not None:
        facts["total_style"] = "summary" if summary is not None else "plain"
    if nr is not None:
        facts["name_print"] = "logo" if logo else name_print
    if ar is not None:
        facts["address_print"] = "comma_ends" if comma_ends else "lines"
    return lines, gold, facts


def _tax_table(
    tr: random.Random,
    words: dict[str, tuple],
    rate: Decimal,
    net: Decimal,
    tax: Decimal,
    num,
) -> list[_Line]:
    """A tax summary table: title, column captions, a row per rate, and the ``Total`` row of the
    net and tax columns (a 0 % row of nothing is printed beside the rate at times)."""
    out = [_Line("")]
    if title := tr.choice(words["title"]):
        out.append(_Line(title, tr.choice(("l", "c"))))
    left, right = tr.choice(words["head"])
    out.append(_Line(left, "lr", right=right))
    code = tr.choice(words["code"])
    gap = " " * tr.choice((2, 3, 4))
    out.append(_Line(f"{code} {rate}%", "lr", right=f"{num(net)}{gap}{num(tax)}"))
    if tr.random() < 0.3:
        zero = num(Decimal("0.00"))
        out.append(_Line(f"{tr.choice(('Z', 'E', '0'))} 0%", "lr", right=f"{zero}{gap}{zero}"))
    out.append(_Line(tr.choice(words["total"]), "lr", right=f"{num(net)}{gap}{num(tax)}"))
    return out


def _render(lines: list[_Line], rng: random.Random) -> tuple[bytes, dict[str, Any]]:
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen.canvas import Canvas

    mono = rng.random() < 0.7
    font, bold_font = ("Courier", "Courier-Bold") if mono else ("Helvetica", "Helvetica-Bold")
    size = round(rng.uniform(7.0, 8.5) * 2) / 2
    step = size * rng.uniform(1.2, 1.45)
    x0, x1 = 12.0, WIDTH - 12.0

    def overlaps(ln: _Line) -> bool:  # left and right parts would touch: right goes below
        fname = bold_font if ln.bold else font
        sz = size * ln.size
        used = stringWidth(ln.text, fname, sz) + stringWidth(ln.right, fname, sz)
        return bool(ln.right) and used + 2 * sz > x1 - x0

    height = 40 + sum(step * (max(1.0, ln.size) + overlaps(ln)) for ln in lines) + 30
    buf = io.BytesIO()
    c = Canvas(buf, pagesize=(WIDTH, height), invariant=1)
    y = height - 30
    positions: dict[str, list[float]] = {}

    def draw(text, x, anchor, sz, bold, field):
        fname = bold_font if bold else font
        while stringWidth(text, fname, sz) > x1 - x0 and sz > 4.5:  # shrink to fit the roll
            sz -= 0.5
        w_ = stringWidth(text, fname, sz)
        xs = x - w_ if anchor == "r" else x - w_ / 2 if anchor == "c" else x
        c.setFont(fname, sz)
        c.drawString(xs, y, text)
        if field:
            box = [
                xs / WIDTH,
                1 - (y + sz) / height,
                (xs + w_) / WIDTH,
                1 - (y - 0.25 * sz) / height,
            ]
            old = positions.get(field)
            positions[field] = (
                [1, *box]
                if old is None
                else [1, min(old[1], box[0]), old[2], max(old[3], box[2]), box[3]]
            )

    for ln in lines:
        sz = size * ln.size
        y -= step * max(1.0, ln.size)
        if not ln.text and not ln.right:
            continue
        if ln.text.startswith("-" * 10):
            c.setDash(2, 2)
            c.line(x0, y + sz / 3, x1, y + sz / 3)
            c.setDash()
            continue
        if ln.align == "c":
            draw(ln.text, WIDTH / 2, "c", sz, ln.bold, ln.field)
        else:
            draw(ln.text, x0, "l", sz, ln.bold, ln.field)
            if ln.right:
                if overlaps(ln):
                    y -= step
                draw(ln.right, x1, "r", sz, ln.bold, ln.right_field)
    c.showPage()
    c.save()
    return buf.getvalue(), {"font": font, "font_size": size, "page_size": [WIDTH, round(height)],
                            "positions": positions}  # fmt: skip


def receipt_document(
    index: int,
    seed: int = 0,
    *,
    scan_ratio: float = 0.0,
    languages: Sequence[str] = L.LANGUAGES,
    header_variety: float = 0.0,
    total_variety: float = 0.0,
    fade_ratio: float = 0.0,
    name_variety: float = 0.0,
    address_variety: float = 0.0,
) -> SynthDocument:
    """Generate receipt number ``index`` of the dataset with ``seed`` (pure function of both).

    ``fade_ratio`` is the share of the *scanned* receipts whose thermal print has faded
    (:func:`~confidence.datasets.synthetic.degrade.fade_plan`: pale, patchy ink with broken
    strokes); 0 (default) reproduces earlier corpora of the same seed. ``name_variety`` is the
    share printed with the merchant's name at the body size (:data:`NAME_PRINTS`) and
    ``address_variety`` the share whose address lines end in commas (:data:`ADDRESS_PRINTS`); 0
    (default) reproduces earlier corpora too.

    Examples
    --------
    >>> d = receipt_document(2, seed=7)
    >>> sorted(d.fields) == sorted(RECEIPT_SCHEMA.names), d.suffix, d.data[:5]
    (True, '.pdf', b'%PDF-')
    """
    if not 0.0 <= scan_ratio <= 1.0:
        raise DatasetError(f"scan_ratio must be within 0-1, got {scan_ratio}")
    if not 0.0 <= header_variety <= 1.0:
        raise DatasetError(f"header_variety must be within 0-1, got {header_variety}")
    if not 0.0 <= total_variety <= 1.0:
        raise DatasetError(f"total_variety must be within 0-1, got {total_variety}")
    if not 0.0 <= fade_ratio <= 1.0:
        raise DatasetError(f"fade_ratio must be within 0-1, got {fade_ratio}")
    if not 0.0 <= name_variety <= 1.0:
        raise DatasetError(f"name_variety must be within 0-1, got {name_variety}")
    if not 0.0 <= address_variety <= 1.0:
        raise DatasetError(f"address_variety must be within 0-1, got {address_variety}")
    bad = [x for x in languages if x not in L.LANGUAGES]
    if bad or not languages:
        raise DatasetError(
            f"unknown language(s) {', '.join(bad) or '(none)'}; use some of: "
            f"{', '.join(L.LANGUAGES)}"
        )
    rng = random.Random(f"extractconf-receipt:{seed}:{index}")
    lang = rng.choice(tuple(languages))
    lines, gold, facts = _content(
        rng, lang, header_variety, total_variety, name_variety, address_variety
    )
    pdf, drawn = _render(lines, rng)
    meta: dict[str, Any] = {
        "generator": "extractconf synth --kind receipt",
        "seed": seed,
        "index": index,
        "layout_family": "till",
        **facts,
        **drawn,
        "source": "digital",
        "scan": None,
    }
    data, suffix = pdf, ".pdf"
    if rng.random() < scan_ratio:
        # a narrow roll is photographed or scanned closer than an A4 page: more pixels per point
        data, suffix, plan = scan(
            pdf, np.random.default_rng([seed, index, 2]), SCAN_DPI, fade_ratio
        )
        meta["source"] = "scan"
        meta["scan"] = plan
    return SynthDocument(f"receipt-{seed}-{index:05d}", data, suffix, gold, meta)
