"""Invoice label vocabulary: which printed labels name which *concept* (en/de/fr/es/it/nl).

A concept is what a label means on an invoice (``doc_id``, ``date_due``, ``amount_tax``, ...).
Schema fields are tied to a concept by their own name, type and description
(:func:`field_concept`), so the table serves any invoice schema, not one dataset's. Labels are
compared after :func:`norm` (lower case, accents and punctuation dropped), so ``USt-IdNr.``,
``N° de facture`` and OCR that lost an accent all match. Concepts that no schema field takes
(``other_date``, ``shipping_block``) exist so a ``Lieferdatum`` is *recognised* and kept away
from ``date_issue`` instead of being mapped by a looser cue.
"""

from __future__ import annotations

import re
import unicodedata

from confidence.schema import Field

_LABELS: dict[str, str] = {
    "doc_id": "invoice no|invoice number|invoice nr|invoice num|invoice id|invoice|inv no|"
    "bill no|bill number|document no|document number|receipt no|credit note no|"
    "rechnungsnummer|rechnungsnr|rechnung nr|rechnungs nr|re nr|rechnung|belegnummer|"
    "n de facture|no de facture|numero de facture|facture n|facture no|ref facture|facture|"
    "numero de factura|factura n|factura no|no factura|factura|numero fattura|fattura n|"
    "n fattura|fattura|factuurnummer|factuur nr|factuurnr|factuur",
    "order_id": "purchase order|purchase order no|purchase order number|po|po no|po number|"
    "po nr|p o|order no|order number|order ref|order reference|your order|order|"
    "bestellnummer|bestell nr|bestellung|ihre bestellung|auftragsnummer|auftrag nr|auftrag|"
    "bon de commande|n de commande|commande n|ref commande|commande|numero de pedido|"
    "pedido|n pedido|ordine n|n ordine|numero ordine|ordine|ordernummer|bestelnummer|"
    "inkooporder",
    "customer_id": "customer no|customer number|customer id|customer nr|customer ref|"
    "customer reference|customer account|account no|account number|client no|client number|"
    "client id|client ref|kundennummer|kunden nr|kundennr|kunden id|kunde nr|n client|"
    "no client|numero client|code client|ref client|reference client|numero de cliente|"
    "n cliente|codigo cliente|codice cliente|cliente n|klantnummer|klant nr|debiteurnummer",
    "tax_id": "vat no|vat number|vat reg no|vat registration no|vat reg|vat id|vat|"
    "vat registration number|tax id|tax no|tax number|tax reg no|gst reg no|gst no|gst id|"
    "tin|ein|abn|ust idnr|ust id nr|ust id|ustid|ust nr|umsatzsteuer id|steuernummer|"
    "steuer nr|st nr|tva intracommunautaire|n tva|no tva|numero de tva|tva intra|"
    "n tva intracommunautaire|siret|siren|nif|cif|nif cif|partita iva|p iva|piva|"
    "codice fiscale|btw nummer|btw nr|btw id|kvk",
    "email": "email|e mail|mail|courriel|correo|correo electronico|posta elettronica",
    "iban": "iban|iban no|konto|account iban",
    "bic": "bic|swift|bic swift|swift bic|swift code|bic code|code bic",
    "currency": "currency|wahrung|devise|monnaie|montants en|amounts in|all amounts in|"
    "moneda|divisa|valuta|betrage in",
    "payment_terms": "payment terms|terms|terms of payment|payment conditions|"
    "zahlungsbedingungen|zahlungskonditionen|zahlungsziel|conditions de paiement|"
    "conditions de reglement|modalites de paiement|reglement|condiciones de pago|"
    "forma de pago|termini di pagamento|condizioni di pagamento|betalingsvoorwaarden|"
    "betalingstermijn",
    "payment_reference": "payment reference|payment ref|reference|ref|remittance reference|"
    "please quote|verwendungszweck|zahlungsreferenz|referenz|reference de paiement|"
    "reference du paiement|communication|libelle du virement|referencia de pago|"
    "referencia|causale|riferimento pagamento|betalingskenmerk|kenmerk|omschrijving",
    "date_issue": "date|invoice date|issue date|date of issue|issued|issued on|dated|"
    "billing date|rechnungsdatum|datum|ausstellungsdatum|belegdatum|date de facture|"
    "date de facturation|date d emission|date emission|emise le|emis le|fecha|"
    "fecha de factura|fecha de emision|fecha factura|data|data fattura|data emissione|"
    "data documento|factuurdatum|datum factuur|tarikh",
    "date_due": "due date|due|payment due|due by|pay by|payable by|due on|fallig am|fallig|"
    "falligkeit|falligkeitsdatum|zahlbar bis|date d echeance|echeance|a payer avant|"
    "date limite de paiement|fecha de vencimiento|vencimiento|scadenza|data scadenza|"
    "vervaldatum|vervaldag|uiterste betaaldatum",
    "other_date": "order date|po date|delivery date|ship date|shipping date|service date|"
    "date of supply|supply date|bestelldatum|auftragsdatum|lieferdatum|leistungsdatum|"
    "date de commande|commande le|commandee le|date de livraison|livre le|"
    "fecha de pedido|fecha de entrega|data ordine|data consegna|orderdatum|leverdatum|"
    "period|zeitraum|periode|time",
    "amount_net": "subtotal|sub total|net|net amount|net total|total net|total excl|"
    "total excl vat|total excl tax|total before tax|amount before tax|untaxed amount|"
    "subtotal net|zwischensumme|nettobetrag|netto|summe netto|gesamt netto|nettosumme|"
    "total ht|montant ht|sous total|total hors taxes|hors taxes|ht|base imponible|"
    "subtotal neto|importe neto|subtotale|imponibile|totale imponibile|subtotaal|"
    "totaal excl btw|netto bedrag",
    "amount_tax": "tax|vat|gst|sst|sales tax|tax amount|total tax|vat amount|total vat|"
    "taxes|mwst|mwst betrag|ust|umsatzsteuer|mehrwertsteuer|steuer|tva|total tva|"
    "montant tva|montant de la tva|iva|importe iva|cuota iva|imposta|btw|btw bedrag",
    "amount_gross": "total|grand total|invoice total|total amount|total incl|total gross|"
    "gross|gross total|total incl vat|total incl tax|total rm|rounded total|jumlah|"
    "gesamtbetrag|gesamt brutto|gesamt|bruttobetrag|brutto|rechnungsbetrag|summe|"
    "gesamtsumme|endbetrag|summe brutto|total ttc|montant ttc|montant total|total general|"
    "importe total|total factura|totale|totale fattura|totaal|totaal incl btw|"
    "totaalbedrag",
    "amount_due": "amount due|balance due|total due|amount payable|balance|to pay|"
    "please pay|amount to pay|zu zahlen|zahlbetrag|offener betrag|zahlbarer betrag|"
    "noch zu zahlen|net a payer|reste a payer|montant du|a payer|solde du|total a payer|"
    "importe a pagar|total a pagar|da pagare|totale da pagare|netto a pagare|te betalen|"
    "openstaand bedrag",
    "customer_block": "bill to|billed to|invoice to|invoiced to|sold to|customer|client|"
    "buyer|billing address|recipient|rechnungsadresse|rechnungsempfanger|kunde|"
    "empfanger|an|facture a|facturer a|facture a l ordre de|adresse de facturation|"
    "destinataire|facturar a|cliente|datos del cliente|fatturare a|intestatario|"
    "indirizzo di fatturazione|factuur aan|klant|factuuradres",
    "vendor_block": "from|seller|vendor|supplier|issued by|von|absender|lieferant|"
    "verkaufer|de la part de|fournisseur|emetteur|vendeur|emisor|proveedor|fornitore|"
    "mittente|leverancier|verkoper",
    "shipping_block": "ship to|shipped to|deliver to|delivery address|shipping address|"
    "lieferadresse|lieferanschrift|livrer a|adresse de livraison|enviar a|"
    "direccion de envio|consegnare a|indirizzo di consegna|afleveradres",
    "tax_rate": "tax rate|vat rate|rate|taux|taux de tva|taux tva|steuersatz|mwst satz|"
    "ust satz|tipo iva|tipo|aliquota|aliquota iva|btw tarief|tarief",
    "contact": "tel|tel no|telephone|phone|fax|mobile|hp|telefon|telefax|web|website|www|"
    "bank|banque|bankverbindung|bank name|kreditinstitut|banca|banco|page|seite|qty|"
    "quantity|description|unit price|ship via|contact",
}


def norm(text: str) -> str:
    """Lower case, accents and punctuation removed, single spaces.

    Examples
    --------
    >>> norm("N° de Facture:"), norm("USt-IdNr."), norm("Fälligkeitsdatum")
    ('n de facture', 'ust idnr', 'falligkeitsdatum')
    """
    t = unicodedata.normalize("NFKD", text.lower().replace("°", " "))
    t = "".join(c for c in t if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^a-z0-9%]+", " ", t).split())


LABELS: dict[str, tuple[str, ...]] = {
    c: tuple(norm(p) for p in v.split("|")) for c, v in _LABELS.items()
}
# Longest phrase first, so "total tva" wins over "total" and "due date" over "date".
_PHRASES = sorted(((p, c) for c, ps in LABELS.items() for p in ps), key=lambda x: -len(x[0]))
_PHRASE_RE = re.compile(
    r"(?<![a-z0-9])(?:" + "|".join(re.escape(p) for p, _ in _PHRASES) + r")(?![a-z0-9])"
)


def concepts_of(phrase: str) -> tuple[str, ...]:
    """Concepts a normalised label phrase may name, in table order (``vat``: id or amount).

    Examples
    --------
    >>> concepts_of("vat")
    ('tax_id', 'amount_tax')
    """
    return tuple(c for c, ps in LABELS.items() if phrase in ps)


def find_labels(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """Known label phrases in normalised ``text``: ``(start, end, concepts)``, longest match wins.

    Examples
    --------
    >>> t = norm("Total TVA: 12,00")
    >>> [(t[s:e], c) for s, e, c in find_labels(t)]
    [('total tva', ('amount_tax',))]
    """
    return [(m.start(), m.end(), concepts_of(m.group(0))) for m in _PHRASE_RE.finditer(text)]


_N = {
    "customer": {"customer", "client", "buyer", "recipient", "purchaser", "billing"},
    "vendor": {"vendor", "seller", "supplier", "company", "issuer", "merchant", "shop", "store"},
    "tax": {"tax", "vat", "gst", "sst"},
    "ident": {"id", "number", "no", "nr", "reg", "registration", "identifier"},
}


def field_concept(field: Field) -> str | None:
    """The concept a schema field stands for, from its name, type and description (or None).

    Examples
    --------
    >>> field_concept(Field("vendor_tax_id", "id")), field_concept(Field("amount_due", "amount"))
    ('tax_id', 'amount_due')
    >>> field_concept(Field("total", "amount")), field_concept(Field("company", "text"))
    ('amount_gross', 'vendor_name')
    """
    n = set(re.split(r"[^a-z0-9]+", field.name.lower()))
    d = field.description.lower()
    t = field.type
    if t in ("email", "iban", "currency"):
        return t
    if t == "percent" or "rate" in n:
        return "tax_rate"
    if n & {"bic", "swift"}:
        return "bic"
    if (n & _N["tax"] and n & _N["ident"]) or "tax identification" in d or "vat number" in d:
        return "tax_id"
    if t == "id" and n & (_N["customer"] | {"account"}):
        return "customer_id"
    if n & {"order", "po", "purchase"} and t != "date":
        return "order_id"
    if n & {"reference", "ref"}:
        return "payment_reference"
    if "terms" in n:
        return "payment_terms"
    if t == "id" and (n & {"invoice", "document", "receipt", "bill"} or "invoice number" in d):
        return "doc_id"
    if t == "date":
        return "date_due" if "due" in n else "date_issue"
    if t == "amount":
        if n & {"due", "payable", "balance"}:
            return "amount_due"
        if n & _N["tax"]:
            return "amount_tax"
        if n & {"net", "untaxed", "subtotal"}:
            return "amount_net"
        return "amount_gross"
    side = "customer" if n & _N["customer"] else "vendor" if n & _N["vendor"] else None
    if t in ("text", "address") and side is None and t == "address":
        side = "vendor"  # an unqualified address on an invoice is the issuer's
    if side and t in ("text", "address") and "shipping" not in n:
        return f"{side}_{'name' if t == 'text' else 'address'}"
    return None
