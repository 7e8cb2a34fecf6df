"""Invoice content: parties, identifiers, dates, line items and totals that add up.

:func:`make_invoice` draws one invoice's content from a seeded :class:`random.Random` and formats
every printed string with the document's locale, so the renderer draws exactly the gold values.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import cache

from confidence.datasets.synthetic import locales as L
from confidence.datasets.synthetic.fields import (
    ABSENCE_RATES,
    NON_SALIENT_FIELDS,
    NON_SALIENT_MODES,
    NON_SALIENT_RATE,
    SCHEMA,
)

CENT = Decimal("0.01")

# (description, unit price range) per language; realistic small-business goods and services.
PRODUCTS: dict[str, tuple[tuple[str, int, int], ...]] = {
    "en": (
        ("Consulting services (hours)", 80, 180),
        ("Web hosting - annual plan", 90, 400),
        ("Toner cartridge HP 305A black", 35, 70),
        ("A4 copy paper, 500 sheets", 4, 9),
        ("Office chair, ergonomic", 150, 420),
        ("Laptop stand, aluminium", 25, 60),
        ("On-site installation", 60, 140),
        ("Software licence, 12 months", 120, 900),
        ("USB-C docking station", 110, 260),
        ("Maintenance contract Q3", 300, 1500),
        ("Delivery and handling", 8, 45),
        ("Graphic design - logo revisions", 70, 150),
        ("Cleaning service, office", 40, 95),
        ("Network cable Cat6, 5 m", 5, 15),
        ("Training workshop (half day)", 450, 1200),
        ("Wireless keyboard and mouse", 30, 80),
        ('Monitor 27" IPS', 180, 390),
        ("Printer service visit", 90, 220),
        ("Coffee beans, 1 kg", 14, 32),
        ("Shipping boxes, pack of 20", 12, 30),
    ),
    "de": (
        ("Beratungsleistung (Std.)", 80, 160),
        ("Webhosting Jahrespaket", 90, 400),
        ("Tonerkartusche schwarz", 35, 70),
        ("Kopierpapier A4, 500 Blatt", 4, 9),
        ("Bürostuhl ergonomisch", 150, 420),
        ("Montage vor Ort", 60, 140),
        ("Softwarelizenz 12 Monate", 120, 900),
        ("Wartungsvertrag Q3", 300, 1500),
        ("Versandkosten", 6, 30),
        ("Grafikdesign Logo-Überarbeitung", 70, 150),
        ("Unterhaltsreinigung Büro", 40, 95),
        ("Netzwerkkabel Cat6, 5 m", 5, 15),
        ("Schulung (halbtägig)", 450, 1200),
        ("Funk-Tastatur mit Maus", 30, 80),
        ("Monitor 27 Zoll", 180, 390),
        ("Anfahrtspauschale", 25, 60),
        ("Kaffeebohnen 1 kg", 14, 32),
        ("Versandkartons, 20 Stück", 12, 30),
        ("Heizungswartung", 120, 260),
        ("Elektroinstallation Material", 40, 300),
    ),
    "fr": (
        ("Prestation de conseil (heures)", 80, 160),
        ("Hébergement web annuel", 90, 400),
        ("Cartouche de toner noir", 35, 70),
        ("Ramette papier A4 500 feuilles", 4, 9),
        ("Fauteuil de bureau ergonomique", 150, 420),
        ("Installation sur site", 60, 140),
        ("Licence logiciel 12 mois", 120, 900),
        ("Contrat de maintenance T3", 300, 1500),
        ("Frais de port", 6, 30),
        ("Création graphique logo", 70, 150),
        ("Nettoyage des bureaux", 40, 95),
        ("Câble réseau Cat6 5 m", 5, 15),
        ("Formation (demi-journée)", 450, 1200),
        ("Clavier et souris sans fil", 30, 80),
        ("Écran 27 pouces", 180, 390),
        ("Frais de déplacement", 25, 60),
        ("Café en grains 1 kg", 14, 32),
        ("Cartons d'expédition x20", 12, 30),
        ("Entretien chaudière", 120, 260),
        ("Fournitures électriques", 40, 300),
    ),
}

BANKS: dict[str, tuple[str, ...]] = {
    "en_US": ("Chase Bank", "Bank of America", "Wells Fargo"),
    "en_GB": ("Barclays", "HSBC UK", "Lloyds Bank", "NatWest"),
    "de_DE": ("Deutsche Bank", "Commerzbank", "Sparkasse KölnBonn", "Volksbank Mittelhessen"),
    "fr_FR": ("BNP Paribas", "Crédit Agricole", "Société Générale", "LCL"),
}
_TLD = {"en_US": ".com", "en_GB": ".co.uk", "de_DE": ".de", "fr_FR": ".fr"}
_MAILBOX = {
    "en": ("billing", "accounts", "invoices", "info"),
    "de": ("buchhaltung", "rechnung", "info", "billing"),
    "fr": ("compta", "facturation", "contact", "info"),
}


@cache
def _faker(locale: str):
    from faker import Faker

    return Faker(locale)


@dataclass(frozen=True)
class LineItem:
    """One printed row of the items table (all strings as printed)."""

    description: str
    quantity: str
    unit_price: str
    amount: str


@dataclass
class Invoice:
    """Everything a layout needs to draw one invoice.

    ``gold`` holds the printed string of every schema field, or None when the field is absent.
    ``extras`` holds printed non-field values (distractor dates and amounts, phone, bank name).
    """

    lang: str
    locale: str
    gold: dict[str, str | None]
    normalized: dict[str, str | None]
    labels: dict[str, str]
    vendor_lines: list[str]
    customer_lines: list[str]
    shipping_lines: list[str] | None
    items: list[LineItem]
    extras: dict[str, str]
    credit_note: bool
    currency_display: str | None
    date_order: str = "dmy"
    totals: dict[str, Decimal] = field(default_factory=dict)
    non_salient: dict[str, str] = field(default_factory=dict)
    distractors: list[str] = field(default_factory=list)

    def money(self, printed: str) -> str:
        """An amount as shown in the totals block, with the currency when it is printed there."""
        cur = self.gold["currency"]
        if self.currency_display != "amounts" or cur is None:
            return printed
        if cur in ("$", "£"):
            return f"-{cur}{printed[1:]}" if printed.startswith("-") else f"{cur}{printed}"
        return f"{printed} {cur}"


def _ascii_slug(text: str) -> str:
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", text)
    stop = {"and", "und", "et", "gmbh", "kg", "ag", "sa", "sas", "sarl", "plc", "ltd", "inc", "llc"}
    kept = [w for w in words if w not in stop] or words
    return "-".join(kept[:2])


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _tax_id(rng: random.Random, locale: str) -> str:
    if locale == "en_US":
        return f"{_digits(rng, 2)}-{_digits(rng, 7)}"
    if locale == "fr_FR":
        return rng.choice(("FR{}{}", "FR {} {}")).format(_digits(rng, 2), _digits(rng, 9))
    prefix = "GB" if locale == "en_GB" else "DE"
    return rng.choice((f"{prefix}{_digits(rng, 9)}", f"{prefix} {_digits(rng, 9)}"))


def _identifier(rng: random.Random, kind: str, year: int) -> str:
    n = rng.randint(1, 99999)
    patterns = {
        "document_id": (
            f"INV-{year}-{n:05d}",
            f"RE{year}-{n:04d}",
            f"F{year}{n:05d}",
            f"{100000 + n}",
            f"{year}/{n:04d}",
            f"{n:06d}",
        ),
        "customer_id": (f"K-{n:05d}", f"C{n:05d}", f"{10000 + n}", f"CUST-{n:05d}", f"D{n:06d}"),
        "order_id": (
            f"PO-{n:05d}",
            f"45{_digits(rng, 8)}",
            f"BE-{year}-{n % 1000:03d}",
            f"CMD-{n:05d}",
            f"ORD{n:06d}",
        ),
        "payment_reference": (
            f"RF{_digits(rng, 2)} {_digits(rng, 4)} {_digits(rng, 4)}",
            f"{_digits(rng, 3)}/{_digits(rng, 4)}/{_digits(rng, 5)}",
            f"REF-{n:06d}",
        ),
    }
    return rng.choice(patterns[kind])


def _group4(text: str) -> str:
    return " ".join(text[i : i + 4] for i in range(0, len(text), 4))


def _items(rng: random.Random, lang: str, style: tuple[str, str], n: int):
    catalogue = PRODUCTS[lang]
    # Distinct products first; long invoices repeat some, as real ones do.
    picks = rng.sample(catalogue, k=min(n, len(catalogue)))
    picks += [rng.choice(catalogue) for _ in range(n - len(picks))]
    rows, total = [], Decimal(0)
    for desc, lo, hi in picks:
        price = (Decimal(rng.randint(lo * 100, hi * 100)) / 100).quantize(CENT)
        if re.search(r"hours|Std\.|heures", desc) and rng.random() < 0.6:  # hours: halves
            qty = Decimal(rng.randint(2, 16)) / 2
            qty_s = L.format_number(qty, style, 1)
        else:
            qty = Decimal(rng.choice((1, 1, 1, 2, 3, 4, 5, 10, 12, 20)))
            qty_s = str(qty)
        amount = (qty * price).quantize(CENT, ROUND_HALF_UP)
        total += amount
        rows.append((desc, qty_s, price, amount))
    return rows, total


def make_invoice(rng: random.Random, lang: str) -> Invoice:
    """Draw the content of one invoice in ``lang`` ("en", "de" or "fr").

    Examples
    --------
    >>> inv = make_invoice(random.Random(1), "de")
    >>> sorted(inv.gold) == sorted(SCHEMA.names)
    True
    """
    locale = rng.choice(L.FAKER_LOCALES[lang])
    fake = _faker(locale)
    fake.seed_instance(rng.getrandbits(32))
    style = rng.choice(L.NUMBER_STYLES[lang]) if rng.random() < 0.3 else L.NUMBER_STYLES[lang][0]
    date_pattern = rng.choice(L.DATE_PATTERNS[locale])

    def num(x: Decimal) -> str:
        return L.format_number(x, style)

    def date(d: dt.date) -> str:
        return L.format_date(d, date_pattern, lang)

    vendor = fake.company()
    vendor_lines = fake.address().split("\n")
    customer = fake.company() if rng.random() < 0.65 else fake.name()
    customer_lines = fake.address().split("\n")
    shipping = fake.address().split("\n") if rng.random() < 0.2 else None

    issue = dt.date(2022, 1, 1) + dt.timedelta(days=rng.randint(0, 1300))
    terms = rng.choice(L.PAYMENT_TERMS[lang])
    m = re.search(r"(\d+)\s*(days|Tage|jours)", terms)
    days = int(m.group(1)) if m else (0 if not re.search(r"\d", terms) else 30)
    due = issue + dt.timedelta(days=days or rng.choice((7, 14)))

    credit = rng.random() < 0.07
    n_items = rng.choice(
        (rng.randint(1, 8),) * 7 + (rng.randint(9, 16),) * 2 + (rng.randint(30, 44),)
    )
    rows, subtotal = _items(rng, lang, style, n_items)
    discount = (
        (subtotal * Decimal(rng.choice((3, 5, 10))) / 100).quantize(CENT)
        if (rng.random() < 0.2)
        else Decimal(0)
    )
    net = subtotal - discount
    rate_s = rng.choice(L.TAX_RATES[locale])
    tax = (net * Decimal(rate_s.replace(",", ".")) / 100).quantize(CENT, ROUND_HALF_UP)
    gross = net + tax
    prepaid = Decimal(0)
    if not credit and rng.random() < 0.15:
        prepaid = (gross * Decimal(rng.choice((20, 30, 50))) / 100).quantize(Decimal(10))
    sign = Decimal(-1) if credit else Decimal(1)
    code, symbol = L.CURRENCIES[locale]
    iban = fake.iban()
    ref = _identifier(rng, "payment_reference", issue.year)
    doc_id = _identifier(rng, "document_id", issue.year)

    gold: dict[str, str | None] = {
        "vendor_name": vendor,
        "vendor_address": ", ".join(vendor_lines),
        "vendor_tax_id": _tax_id(rng, locale),
        "vendor_email": f"{rng.choice(_MAILBOX[lang])}@{_ascii_slug(vendor)}{_TLD[locale]}",
        "customer_name": customer,
        "customer_billing_address": ", ".join(customer_lines),
        "customer_id": _identifier(rng, "customer_id", issue.year),
        "document_id": doc_id,
        "order_id": _identifier(rng, "order_id", issue.year),
        "date_issue": date(issue),
        "date_due": date(due),
        "payment_terms": terms,
        "currency": rng.choice((code, symbol)),
        "amount_total_net": num(sign * net),
        "amount_total_tax": num(sign * tax),
        "tax_rate": rate_s,
        "amount_total_gross": num(sign * gross),
        "amount_due": num(sign * (gross - prepaid)),
        "iban": _group4(iban) if rng.random() < 0.75 else iban,
        "bic": fake.swift(length=rng.choice((8, 11))),
        "payment_reference": doc_id if rng.random() < 0.25 else ref,
    }
    normalized: dict[str, str | None] = {
        "date_issue": issue.isoformat(),
        "date_due": due.isoformat(),
        "currency": code,
        "amount_total_net": f"{sign * net:.2f}",
        "amount_total_tax": f"{sign * tax:.2f}",
        "tax_rate": rate_s.replace(",", "."),
        "amount_total_gross": f"{sign * gross:.2f}",
        "amount_due": f"{sign * (gross - prepaid):.2f}",
        "iban": iban,
    }
    for name, p in ABSENCE_RATES.items():
        if rng.random() < p:
            gold[name] = None
    if gold["amount_total_gross"] is None and gold["amount_due"] is None:
        gold["amount_total_gross"] = num(sign * gross)  # every invoice shows something payable
    normalized = {k: (v if gold[k] is not None else None) for k, v in normalized.items()}

    extras = {
        "subtotal": num(sign * subtotal),
        "discount": num(-sign * discount),
        "prepaid": num(-prepaid),
        "order_date": date(issue - dt.timedelta(days=rng.randint(3, 25))),
        "delivery_date": date(issue - dt.timedelta(days=rng.randint(0, 6))),
        "phone": fake.phone_number(),
        "bank": rng.choice(BANKS[locale]),
    }
    distractors = [k for k in ("order_date", "delivery_date") if rng.random() < 0.35]
    if discount:
        distractors += ["subtotal", "discount"]
    if prepaid:
        distractors.append("prepayment")
    if shipping:
        distractors.append("shipping_address")
    if credit:
        distractors.append("credit_note")

    non_salient = {
        f: rng.choice(NON_SALIENT_MODES)
        for f in NON_SALIENT_FIELDS
        if gold[f] is not None and rng.random() < NON_SALIENT_RATE
    }
    keys = [*SCHEMA.names, *(k for k in L.LABELS if k.startswith("@"))]
    labels = {k: L.label(k, lang, locale, rng) for k in keys if k in L.LABELS}
    if credit:
        labels["@title"] = labels["@credit_title"]
    items = [LineItem(d, q, num(p), num(sign * a)) for d, q, p, a in rows]
    return Invoice(
        lang=lang,
        locale=locale,
        gold=gold,
        normalized=normalized,
        labels=labels,
        vendor_lines=vendor_lines,
        customer_lines=customer_lines,
        shipping_lines=shipping,
        items=items,
        extras=extras,
        credit_note=credit,
        currency_display=rng.choice(("amounts", "amounts", "header", "meta")),
        totals={
            "subtotal": sign * subtotal,
            "discount": -sign * discount,
            "net": sign * net,
            "tax": sign * tax,
            "gross": sign * gross,
            "prepaid": -prepaid,
            "due": sign * (gross - prepaid),
        },
        date_order="ymd"
        if date_pattern.startswith("{yyyy}")
        else "mdy"
        if locale == "en_US"
        else "dmy",
        non_salient=non_salient,
        distractors=distractors,
    )
