"""Locale conventions of synthetic invoices: number and date formats, label wording.

Everything printed on a synthetic invoice that depends on the language comes from here, so the
gold value of a field is always the exact string the renderer draws.
"""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any

LANGUAGES: tuple[str, ...] = ("en", "de", "fr")

# Faker locales per language; "en" alternates between US and UK companies.
FAKER_LOCALES: dict[str, tuple[str, ...]] = {
    "en": ("en_US", "en_GB"),
    "de": ("de_DE",),
    "fr": ("fr_FR",),
}

# Faker locales whose company names, person names and postal addresses the value-kinds classifier
# (scripts/train_value_kinds.py, confidence.documents.value_kinds) also learns from, beside the
# values of the synthetic documents: documents are printed in the LANGUAGES above, but the names
# and addresses on real ones come from anywhere. English-speaking countries of every continent
# and the larger Latin-script locales Faker ships; each gives company names, person names (both
# also in capitals, as letterheads and till receipts print them) and one-line addresses.
NAME_LOCALES: tuple[str, ...] = (
    "en_AU", "en_CA", "en_IE", "en_IN", "en_MS", "en_NZ", "en_PH", "en_PK", "en_NG", "id_ID",
    "es_ES", "it_IT", "nl_NL", "pt_BR", "pl_PL", "sv_SE", "tr_TR", "vi_VN", "da_DK", "fi_FI",
)  # fmt: skip

# (thousands separator, decimal separator) choices per language; first is the most common.
NUMBER_STYLES: dict[str, tuple[tuple[str, str], ...]] = {
    "en": ((",", "."), ("", ".")),
    "de": ((".", ","), ("", ","), (" ", ",")),
    "fr": ((" ", ","), ("", ","), (".", ",")),
}

MONTHS: dict[str, tuple[str, ...]] = {
    "en": (
        "January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December",
    ),
    "de": (
        "Januar", "Februar", "März", "April", "Mai", "Juni",
        "Juli", "August", "September", "Oktober", "November", "Dezember",
    ),
    "fr": (
        "janvier", "février", "mars", "avril", "mai", "juin",
        "juillet", "août", "septembre", "octobre", "novembre", "décembre",
    ),
}  # fmt: skip

# Date patterns per Faker locale: {d} day, {dd} zero-padded day, {mm} month, {yyyy} / {yy} year,
# {month} full month name, {mon} three-letter month name.
DATE_PATTERNS: dict[str, tuple[str, ...]] = {
    "en_US": ("{mm}/{dd}/{yyyy}", "{month} {d}, {yyyy}", "{mon} {d}, {yyyy}", "{yyyy}-{mm}-{dd}"),
    "en_GB": ("{dd}/{mm}/{yyyy}", "{d} {month} {yyyy}", "{dd}-{mon}-{yyyy}", "{yyyy}-{mm}-{dd}"),
    "de_DE": ("{dd}.{mm}.{yyyy}", "{d}. {month} {yyyy}", "{dd}.{mm}.{yy}", "{yyyy}-{mm}-{dd}"),
    "fr_FR": ("{dd}/{mm}/{yyyy}", "{d} {month} {yyyy}", "{dd}.{mm}.{yyyy}", "{yyyy}-{mm}-{dd}"),
}

CURRENCIES: dict[str, tuple[str, str]] = {
    "en_US": ("USD", "$"),
    "en_GB": ("GBP", "£"),
    "de_DE": ("EUR", "€"),
    "fr_FR": ("EUR", "€"),
}

TAX_RATES: dict[str, tuple[str, ...]] = {
    "en_US": ("7", "8.25", "6.5", "10"),
    "en_GB": ("20", "5"),
    "de_DE": ("19", "7"),
    "fr_FR": ("20", "10", "5,5"),
}

# Label synonym sets. Keys are schema field names, or "@name" for printed things that are not
# schema fields (distractors, table headers). The renderer picks one synonym per document.
LABELS: dict[str, dict[str, tuple[str, ...]]] = {
    "document_id": {
        "en": ("Invoice No.", "Invoice #", "Inv #", "Invoice Number", "Invoice no:", "Bill No."),
        "de": ("Rechnungsnummer", "Rechnungs-Nr.", "Rechnung Nr.", "Beleg-Nr.", "RE-Nr."),
        "fr": ("N° de facture", "Facture n°", "Numéro de facture", "Réf. facture", "N° facture"),
    },
    "date_issue": {
        "en": ("Invoice Date", "Date", "Date of issue", "Issued", "Billing date"),
        "de": ("Rechnungsdatum", "Datum", "Ausstellungsdatum", "Belegdatum"),
        "fr": ("Date de facture", "Date", "Date d'émission", "Émise le"),
    },
    "date_due": {
        "en": ("Due Date", "Payment due", "Due by", "Pay by"),
        "de": ("Fällig am", "Fälligkeitsdatum", "Zahlbar bis", "Zahlungsziel"),
        "fr": ("Date d'échéance", "Échéance", "À payer avant le", "Date limite de paiement"),
    },
    "customer_id": {
        "en": ("Customer No.", "Customer ID", "Account No.", "Client ref."),
        "de": ("Kundennummer", "Kunden-Nr.", "Kd.-Nr.", "Debitor"),
        "fr": ("N° client", "Code client", "Réf. client", "Identifiant client"),
    },
    "order_id": {
        "en": ("PO Number", "Order No.", "Purchase Order", "Your order", "P.O. #"),
        "de": ("Bestellnummer", "Auftragsnummer", "Ihre Bestellung", "Bestell-Nr."),
        "fr": ("N° de commande", "Bon de commande", "Commande n°", "Réf. commande"),
    },
    "payment_reference": {
        "en": ("Payment reference", "Reference", "Remittance ref.", "Please quote"),
        "de": ("Verwendungszweck", "Zahlungsreferenz", "Referenz", "Bitte angeben"),
        "fr": ("Référence de paiement", "Référence", "Réf. virement", "Libellé du virement"),
    },
    "payment_terms": {
        "en": ("Terms", "Payment terms", "Conditions"),
        "de": ("Zahlungsbedingungen", "Konditionen", "Zahlungsbedingung"),
        "fr": ("Conditions de paiement", "Conditions", "Modalités de paiement"),
    },
    "vendor_tax_id": {
        "en_US": ("EIN", "Tax ID", "Federal Tax ID"),
        "en_GB": ("VAT Reg No.", "VAT No.", "VAT registration"),
        "de": ("USt-IdNr.", "USt-ID", "Umsatzsteuer-ID", "UID"),
        "fr": ("N° TVA intracom.", "TVA intracommunautaire", "N° TVA"),
    },
    "vendor_email": {
        "en": ("Email", "E-mail", "Mail"),
        "de": ("E-Mail", "Mail", "Email"),
        "fr": ("E-mail", "Courriel", "Mail"),
    },
    "vendor_address": {
        "en": ("Address", "Registered office"),
        "de": ("Anschrift", "Sitz"),
        "fr": ("Adresse", "Siège social"),
    },
    "iban": {"en": ("IBAN",), "de": ("IBAN",), "fr": ("IBAN",)},
    "bic": {
        "en": ("BIC", "SWIFT", "SWIFT/BIC"),
        "de": ("BIC", "SWIFT-BIC", "BIC/SWIFT"),
        "fr": ("BIC", "Code BIC", "SWIFT"),
    },
    "currency": {
        "en": ("Currency", "All amounts in", "Curr."),
        "de": ("Währung", "Beträge in", "Whg."),
        "fr": ("Devise", "Montants en", "Monnaie"),
    },
    "amount_total_net": {
        "en": ("Net total", "Total excl. VAT", "Net amount", "Subtotal (net)", "Total before tax"),
        "de": ("Nettobetrag", "Summe netto", "Gesamt netto", "Zwischensumme netto"),
        "fr": ("Total HT", "Montant HT", "Total hors taxes", "Net HT"),
    },
    "amount_total_tax": {
        "en": ("VAT", "Tax", "Sales tax", "VAT amount"),
        "de": ("MwSt.", "USt.", "Umsatzsteuer", "zzgl. MwSt."),
        "fr": ("TVA", "Montant TVA", "Total TVA"),
    },
    "tax_rate": {
        "en": ("VAT rate", "Tax rate", "Rate"),
        "de": ("Steuersatz", "MwSt.-Satz", "USt.-Satz"),
        "fr": ("Taux TVA", "Taux", "Taux de TVA"),
    },
    "amount_total_gross": {
        "en": ("Total", "Invoice total", "Total incl. VAT", "Grand total", "TOTAL"),
        "de": ("Gesamtbetrag", "Rechnungsbetrag", "Summe brutto", "Gesamt brutto", "Endbetrag"),
        "fr": ("Total TTC", "Montant TTC", "Net à payer TTC", "Total"),
    },
    "amount_due": {
        "en": ("Amount due", "Balance due", "Please pay", "Total due", "Amount payable"),
        "de": ("Zahlbetrag", "Offener Betrag", "Zu zahlen", "Noch zu zahlen"),
        "fr": ("Net à payer", "Reste à payer", "Solde dû", "Montant dû"),
    },
    "@title": {
        "en": ("INVOICE", "Invoice", "TAX INVOICE", "Sales Invoice"),
        "de": ("RECHNUNG", "Rechnung"),
        "fr": ("FACTURE", "Facture"),
    },
    "@credit_title": {
        "en": ("CREDIT NOTE", "Credit Note", "Credit Memo"),
        "de": ("GUTSCHRIFT", "Gutschrift", "Rechnungskorrektur"),
        "fr": ("AVOIR", "Facture d'avoir"),
    },
    "@bill_to": {
        "en": ("Bill to", "Invoice to", "Billed to", "Customer", "To"),
        "de": ("Rechnungsempfänger", "Kunde", "An", "Rechnungsadresse"),
        "fr": ("Facturé à", "Client", "Adresse de facturation", "Destinataire"),
    },
    "@ship_to": {
        "en": ("Ship to", "Deliver to", "Delivery address"),
        "de": ("Lieferadresse", "Lieferanschrift", "Versand an"),
        "fr": ("Livré à", "Adresse de livraison", "Livraison"),
    },
    "@from": {"en": ("From", "Supplier"), "de": ("Von", "Lieferant"), "fr": ("De", "Fournisseur")},
    "@order_date": {
        "en": ("Order date", "PO date", "Ordered"),
        "de": ("Bestelldatum", "Auftragsdatum"),
        "fr": ("Date de commande", "Commandé le"),
    },
    "@delivery_date": {
        "en": ("Delivery date", "Ship date", "Date of supply", "Service period end"),
        "de": ("Lieferdatum", "Leistungsdatum", "Liefertag"),
        "fr": ("Date de livraison", "Livré le", "Date de prestation"),
    },
    "@subtotal": {
        "en": ("Subtotal", "Items total", "Sum of items"),
        "de": ("Zwischensumme", "Warenwert", "Summe Positionen"),
        "fr": ("Sous-total", "Total articles", "Total brut HT"),
    },
    "@discount": {
        "en": ("Discount", "Less discount", "Rebate"),
        "de": ("Rabatt", "abzgl. Rabatt", "Nachlass"),
        "fr": ("Remise", "Rabais", "Remise commerciale"),
    },
    "@prepaid": {
        "en": ("Less deposit paid", "Prepayment", "Paid on account", "Amount paid"),
        "de": ("abzgl. Anzahlung", "Vorauszahlung", "Bereits bezahlt", "Abschlag"),
        "fr": ("Acompte versé", "Déjà réglé", "Avance reçue"),
    },
    "@phone": {"en": ("Phone", "Tel."), "de": ("Tel.", "Telefon"), "fr": ("Tél.", "Téléphone")},
    "@payment": {
        "en": ("Payment details", "Bank details", "How to pay"),
        "de": ("Bankverbindung", "Zahlungsinformationen"),
        "fr": ("Coordonnées bancaires", "Règlement"),
    },
    "@bank": {"en": ("Bank", "Bank name"), "de": ("Bank", "Kreditinstitut"), "fr": ("Banque",)},
    "@page": {"en": ("Page",), "de": ("Seite",), "fr": ("Page",)},
    "@continued": {
        "en": ("Continued on next page",),
        "de": ("Fortsetzung auf der nächsten Seite",),
        "fr": ("Suite page suivante",),
    },
    "@col_pos": {"en": ("#", "Item"), "de": ("Pos.", "Pos"), "fr": ("N°", "Réf.")},
    "@col_desc": {
        "en": ("Description", "Item description", "Product / Service"),
        "de": ("Bezeichnung", "Beschreibung", "Artikel / Leistung"),
        "fr": ("Désignation", "Description", "Article"),
    },
    "@col_qty": {
        "en": ("Qty", "Quantity", "Units"),
        "de": ("Menge", "Anz."),
        "fr": ("Qté", "Quantité"),
    },
    "@col_price": {
        "en": ("Unit price", "Rate", "Price"),
        "de": ("Einzelpreis", "E-Preis", "Preis/Einh."),
        "fr": ("Prix unitaire", "P.U. HT", "Prix"),
    },
    "@col_amount": {
        "en": ("Amount", "Line total", "Total"),
        "de": ("Gesamtpreis", "Betrag", "Gesamt"),
        "fr": ("Montant HT", "Total HT", "Montant"),
    },
    "@greeting": {
        "en": ("Dear Sir or Madam,", "Dear customer,", "Hello,"),
        "de": ("Sehr geehrte Damen und Herren,", "Guten Tag,",
               "Sehr geehrte Kundin, sehr geehrter Kunde,"),
        "fr": ("Madame, Monsieur,", "Cher client,", "Bonjour,"),
    },
    "@intro": {
        "en": ("we hereby invoice you for the following goods and services:",
               "thank you for your order. We charge you as follows:"),
        "de": ("für unsere Leistungen erlauben wir uns, Ihnen folgendes zu berechnen:",
               "vielen Dank für Ihren Auftrag. Wir berechnen Ihnen:"),
        "fr": ("nous vous prions de trouver ci-dessous le détail de notre facturation :",
               "nous vous remercions de votre commande. Veuillez trouver le détail ci-dessous :"),
    },
    "@closing": {
        "en": ("Thank you for your business!", "Kind regards",
               "We appreciate your prompt payment."),
        "de": ("Vielen Dank für Ihren Auftrag!", "Mit freundlichen Grüßen",
               "Wir danken für Ihr Vertrauen."),
        "fr": ("Merci de votre confiance !", "Cordialement",
               "Nous vous remercions de votre règlement."),
    },
}  # fmt: skip

PAYMENT_TERMS: dict[str, tuple[str, ...]] = {
    "en": ("Net 30", "Net 14", "Due on receipt", "Payable within 30 days", "2% 10, Net 30",
           "Payment within 14 days of invoice date"),
    "de": ("Zahlbar innerhalb von 14 Tagen ohne Abzug", "30 Tage netto", "Sofort fällig",
           "Zahlbar sofort ohne Abzug", "14 Tage 2% Skonto, 30 Tage netto"),
    "fr": ("Paiement à 30 jours", "Paiement à réception", "30 jours fin de mois",
           "Paiement à 45 jours date de facture", "Comptant à réception"),
}  # fmt: skip


def label(key: str, lang: str, locale: str, rng: random.Random) -> str:
    """Pick one synonym for ``key`` (a field name or ``"@name"``) in a language.

    Locale-specific entries (``"en_GB"``) win over the language entry (``"en"``).

    Examples
    --------
    >>> label("iban", "de", "de_DE", random.Random(0))
    'IBAN'
    """
    table = LABELS[key]
    return rng.choice(table.get(locale) or table[lang])


def format_number(value: Decimal, style: tuple[str, str], places: int = 2) -> str:
    """Format a decimal with a (thousands, decimal) separator pair; minus sign in front.

    Examples
    --------
    >>> format_number(Decimal("-1234.5"), (".", ","))
    '-1.234,50'
    >>> format_number(Decimal("1234567.891"), (" ", ","))
    '1 234 567,89'
    """
    q = Decimal(1).scaleb(-places)
    value = value.quantize(q)
    sign = "-" if value < 0 else ""
    whole, _, frac = f"{abs(value):f}".partition(".")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    out = style[0].join(groups)
    return sign + out + (style[1] + frac if places else "")


def format_date(day: dt.date, pattern: str, lang: str) -> str:
    """Render a date with a :data:`DATE_PATTERNS` pattern and the language's month names.

    Examples
    --------
    >>> format_date(dt.date(2025, 4, 3), "{d}. {month} {yyyy}", "de")
    '3. April 2025'
    >>> format_date(dt.date(2025, 4, 3), "{mm}/{dd}/{yyyy}", "en")
    '04/03/2025'
    """
    month = MONTHS[lang][day.month - 1]
    parts: dict[str, Any] = {
        "d": day.day,
        "dd": f"{day.day:02d}",
        "mm": f"{day.month:02d}",
        "yyyy": day.year,
        "yy": f"{day.year % 100:02d}",
        "month": month,
        "mon": month[:3],
    }
    return pattern.format(**parts)
