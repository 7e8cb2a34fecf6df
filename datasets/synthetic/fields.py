"""The synthetic invoice schema (DocILE-style fields) and how often each field goes missing.

Gold-value convention (the value recorded in ``labels.jsonl``): the string **as printed on the
page**, without its label and without a currency sign or ``%``. Amounts keep the document's
number format (``"1.234,56"``, ``"-80.00"`` on credit notes), dates keep the printed format
(``"03.04.2025"``, ``"3 avril 2025"``), IBANs keep their printed spacing, addresses are the
printed lines joined by ``", "``, and ``currency`` is the printed code or symbol (``"EUR"``,
``"€"``). ``null`` means the field is not on the page. Normalised values (ISO dates, plain decimal
amounts, ISO currency codes) are recorded separately in ``meta["normalized"]``.
"""

from __future__ import annotations

from confidence.schema import Field, Schema

_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("vendor_name", "text", "Name of the company that issued the invoice (the seller)."),
    ("vendor_address", "address", "Postal address of the seller."),
    ("vendor_tax_id", "id", "Seller's VAT / tax identification number."),
    ("vendor_email", "email", "Seller's e-mail address."),
    ("customer_name", "text", "Name of the billed customer (the buyer)."),
    ("customer_billing_address", "address", "Billing address of the customer (not shipping)."),
    ("customer_id", "id", "Customer / account number assigned by the seller."),
    ("document_id", "id", "Invoice number."),
    ("order_id", "id", "Purchase order number of the customer."),
    ("date_issue", "date", "Date the invoice was issued."),
    ("date_due", "date", "Date by which the invoice must be paid."),
    ("payment_terms", "text", "Payment terms as printed, e.g. 'Net 30'."),
    ("currency", "currency", "Currency of the amounts, as printed (code or symbol)."),
    ("amount_total_net", "amount", "Total amount before tax (after any discount)."),
    ("amount_total_tax", "amount", "Total tax amount."),
    ("tax_rate", "percent", "Tax (VAT) rate in percent."),
    ("amount_total_gross", "amount", "Total amount including tax."),
    ("amount_due", "amount", "Amount still to be paid (total minus prepayments)."),
    ("iban", "iban", "IBAN of the seller's bank account."),
    ("bic", "id", "BIC / SWIFT code of the seller's bank."),
    ("payment_reference", "id", "Reference the payer must quote with the transfer."),
)

SCHEMA = Schema("synthetic_invoice", tuple(Field(n, t, d) for n, t, d in _FIELDS))
"""The schema written to ``schema.json`` by :func:`confidence.datasets.synthetic.generate`."""

ABSENCE_RATES: dict[str, float] = {
    "vendor_name": 0.10,  # logo-only letterheads
    "vendor_address": 0.12,
    "vendor_tax_id": 0.25,
    "vendor_email": 0.30,
    "customer_name": 0.10,
    "customer_billing_address": 0.15,
    "customer_id": 0.35,
    "document_id": 0.10,
    "order_id": 0.40,
    "date_issue": 0.10,
    "date_due": 0.30,
    "payment_terms": 0.35,
    "currency": 0.20,
    "amount_total_net": 0.15,
    "amount_total_tax": 0.18,
    "tax_rate": 0.25,
    "amount_total_gross": 0.17,  # repaired when amount_due is absent too: ~12% net
    "amount_due": 0.30,
    "iban": 0.22,
    "bic": 0.35,
    "payment_reference": 0.40,
}
"""Probability that a field is left off a document (each field independently, then repaired so
every invoice still shows a payable total)."""

NON_SALIENT_FIELDS: tuple[str, ...] = (
    "vendor_address",
    "vendor_tax_id",
    "vendor_email",
    "customer_id",
    "order_id",
    "date_due",
    "payment_terms",
    "iban",
    "bic",
    "payment_reference",
    "amount_total_tax",
)
"""Fields that may be printed non-saliently (tiny, light grey, in the footer or sideways)."""

NON_SALIENT_RATE = 0.08
NON_SALIENT_MODES: tuple[str, ...] = ("tiny", "grey", "footer", "rotated")
