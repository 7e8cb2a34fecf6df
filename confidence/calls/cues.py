"""Label cues per field: words a document prints next to a field's value.

A field's cues are its name's words, the content words of its description and a synonym table
keyed by those words (English, French, Malay receipt/invoice vocabulary). The Hunter ranks
candidates by them and the Mapper maps the document's own labels to schema fields with them.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from confidence.schema import Field

# Keyed by a word that may appear in a field name or description.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "total": (
        "total",
        "grand total",
        "amount due",
        "total due",
        "net total",
        "total amount",
        "total incl",
        "rounded total",
        "jumlah",
        "montant ttc",
        "total ttc",
        "balance due",
        "amount payable",
        "total rm",
        "total (rm)",
    ),
    "untaxed": (
        "subtotal",
        "sub total",
        "total ht",
        "montant ht",
        "untaxed amount",
        "total excl",
        "net amount",
        "total before tax",
    ),
    "tax": ("tax", "gst", "vat", "tva", "sst", "taxes", "tax amount", "total tax"),
    "date": ("date", "dated", "tarikh", "issued", "invoice date", "date de facture"),
    "due": ("due date", "due", "payment due", "date d'échéance", "échéance", "pay by"),
    "invoice": (
        "invoice no",
        "invoice number",
        "invoice #",
        "inv no",
        "facture",
        "facture n°",
        "bill no",
        "receipt no",
        "no facture",
        "invoice",
    ),
    "po": (
        "po",
        "p.o.",
        "purchase order",
        "po number",
        "order no",
        "bon de commande",
        "référence",
        "your ref",
        "customer ref",
    ),
    "customer": (
        "bill to",
        "billed to",
        "customer",
        "client",
        "sold to",
        "invoice to",
        "ship to",
        "attention",
        "partner",
    ),
    "company": ("sdn bhd", "ltd", "inc", "llc", "enterprise", "trading", "company", "store"),
    "address": ("address", "adresse", "alamat"),
    "currency": ("currency", "devise", "rm", "eur", "usd", "myr"),
    "email": ("email", "e-mail", "mail"),
    "iban": ("iban", "account"),
    "percent": ("rate", "%", "taux"),
    "terms": ("terms", "payment terms", "conditions", "conditions de paiement"),
    "bic": ("bic", "swift", "code bic", "bic/swift"),
    "reference": ("reference", "payment reference", "ref", "référence"),
}

# French and German invoice labels (the synthetic set and European invoices print them).
_EXTRA: dict[str, tuple[str, ...]] = {
    "date": ("émise le", "émis le", "datum", "rechnungsdatum", "ausstellungsdatum", "issue date"),
    "due": ("fällig am", "fälligkeit", "zahlbar bis", "due by"),
    "invoice": ("réf. facture", "n° facture", "rechnung nr", "rechnungsnummer", "document no"),
    "po": ("bestellnummer", "bestellung", "commande", "order ref"),
    "total": ("net à payer", "gesamtbetrag", "bruttobetrag", "summe", "total ttc"),
    "untaxed": ("nettobetrag", "zwischensumme", "total hors taxes"),
    "tax": ("mwst", "ust", "umsatzsteuer"),
    "customer": ("facturé à", "kunde", "rechnungsempfänger"),
}
for _k, _v in _EXTRA.items():
    SYNONYMS[_k] = SYNONYMS[_k] + _v

_STOP = frozenset(
    "a an the of or and to by as for in on at is be it its that this which who whom printed "
    "name number amount without with before after including".split()
)

# Field-name words that imply another word's synonyms (tax_amount -> tax, total_untaxed -> untaxed).
_ALIASES = {
    "vendor": "company",
    "shop": "company",
    "merchant": "company",
    "supplier": "company",
    "seller": "company",
    "issuer": "company",
    "client": "customer",
    "buyer": "customer",
    "partner": "customer",
    "vat": "tax",
    "gst": "tax",
    "subtotal": "untaxed",
    "net": "untaxed",
    "purchase": "po",
    "order": "po",
    "issue": "date",
}


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9%]+", text.lower()) if w]


def field_keys(field: Field) -> list[str]:
    """Synonym-table keys a field's *name* refers to (description words when the name has none).

    Examples
    --------
    >>> field_keys(Field("invoice_date_due", "date"))
    ['invoice', 'date', 'due']
    >>> field_keys(Field("total_untaxed", "amount"))
    ['total', 'untaxed']
    """

    def keys_of(words: list[str]) -> list[str]:
        out = []
        for w in words:
            k = _ALIASES.get(w, w)
            if k in SYNONYMS and k not in out:
                out.append(k)
        return out

    keys = keys_of(_words(field.name))
    return keys or keys_of(_words(field.description))


def field_cues(field: Field) -> tuple[str, ...]:
    """Lower-case phrases a document may print as this field's label.

    Examples
    --------
    >>> "gst" in field_cues(Field("tax_amount", "amount"))
    True
    """
    cues: list[str] = [field.name.replace("_", " ").lower()]
    for k in field_keys(field):
        cues.extend(SYNONYMS[k])
    desc = [w for w in _words(field.description) if w not in _STOP and len(w) > 2]
    cues.extend(desc)
    return tuple(dict.fromkeys(c for c in cues if c))


# Keys whose synonyms describe the *value* (a legal suffix), not a label printed beside it.
_VALUE_KEYS = frozenset({"company"})


def label_cues(field: Field) -> tuple[str, ...]:
    """Phrases that, printed as a label, name this field: its name and label synonyms only.

    Description words are left out (``"company"`` in "address of the issuing company" must not
    make ``Company No`` a label of the address).

    Examples
    --------
    >>> label_cues(Field("address", "address", "Postal address of the issuing company"))
    ('address', 'adresse', 'alamat')
    """
    cues = [field.name.replace("_", " ").lower()]
    for k in field_keys(field):
        if k not in _VALUE_KEYS:
            cues.extend(SYNONYMS[k])
    return tuple(dict.fromkeys(cues))


def cue_score(text: str, cues: tuple[str, ...]) -> float:
    """How much ``text`` reads like one of ``cues``, in 0-1 (best partial-ratio over cues).

    Short cues must match as whole words so that ``"po"`` does not fire inside ``"deposit"``.

    Examples
    --------
    >>> cue_score("GRAND TOTAL (RM)", ("total", "amount due"))
    1.0
    >>> cue_score("DEPOSIT", ("po",))
    0.0
    """
    low = text.lower()
    words = set(_words(low))
    best = 0.0
    for c in cues:
        if len(c) <= 4:
            if c in words or (not c.isalnum() and c in low):
                return 1.0
            continue
        if c in low:
            return 1.0
        if len(low) >= len(c):  # a short text must not "contain" a longer cue
            best = max(best, fuzz.partial_ratio(c, low) / 100.0)
    return best if best >= 0.8 else 0.0
