"""Shared pytest fixtures: a reportlab invoice, its raster and degraded scans (session-cached).

Builders live in ``tests/fixtures/docs.py`` so test modules can also call them directly::

    from tests.fixtures.docs import make_invoice_pdf, render_pdf
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
# CI machines are 2 noisy cores: hypothesis checks properties, never speed
settings.register_profile(
    "extractconf", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("extractconf")

from tests.fixtures import docs as fx  # noqa: E402

SCAN_DPI = 200.0


@pytest.fixture(scope="session")
def invoice_pdf(tmp_path_factory) -> fx.InvoiceSpec:
    """A one-page digital invoice PDF and the boxes of every word drawn on it."""
    return fx.make_invoice_pdf(tmp_path_factory.mktemp("invoice") / "invoice.pdf")


@pytest.fixture(scope="session")
def invoice_gray(invoice_pdf):
    """The invoice rendered to a grey raster at 200 dpi (a perfect scan)."""
    return fx.render_pdf(invoice_pdf.path, SCAN_DPI)


@pytest.fixture(scope="session")
def scans(invoice_gray, tmp_path_factory) -> dict[str, Path]:
    """Image files of the invoice: ``clean``, ``blur``, ``noise``, ``rot2``, ``rot90``,
    ``jpeg30`` and ``dpi100`` (all at 200 dpi except ``dpi100``)."""
    d = tmp_path_factory.mktemp("scans")
    g = invoice_gray
    return {
        "clean": fx.save_image(g, d / "clean.png", SCAN_DPI),
        "blur": fx.save_image(fx.blur(g, 2.0), d / "blur.png", SCAN_DPI),
        "noise": fx.save_image(fx.add_noise(g, 45.0), d / "noise.png", SCAN_DPI),
        "rot2": fx.save_image(fx.rotate(g, 2.0), d / "rot2.png", SCAN_DPI),
        "rot90": fx.save_image(fx.rotate(g, 90.0), d / "rot90.png", SCAN_DPI),
        "jpeg30": fx.save_image(fx.blur(g, 0.8), d / "jpeg30.jpg", SCAN_DPI, quality=30),
        "dpi100": fx.save_image(fx.downscale(g, 0.5), d / "dpi100.png", SCAN_DPI / 2),
    }


@pytest.fixture(scope="session")
def loaded_scans(scans):
    """Every scan loaded once with :func:`~confidence.documents.load_document` (OCR is slow)."""
    from confidence.documents import load_document

    return {name: load_document(path) for name, path in scans.items()}
