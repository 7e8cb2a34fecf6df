"""Scan simulation: render a synthetic PDF with pypdfium2, then degrade it like a cheap scanner.

Each degradation is drawn independently with its own probability and strength from a seeded
:class:`numpy.random.Generator` and recorded, so a dataset says exactly what was done to each page.
"""

from __future__ import annotations

import io
from typing import Any

import cv2
import numpy as np
from PIL import Image

DPI_CHOICES = (100, 130, 150, 150, 200, 200)


def render_pdf(pdf: bytes, dpi: float) -> list[np.ndarray]:
    """Rasterise every page of a PDF to an RGB uint8 array at ``dpi``."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    try:
        return [np.asarray(page.render(scale=dpi / 72).to_pil().convert("RGB")) for page in doc]
    finally:
        doc.close()


def plan(
    rng: np.random.Generator,
    dpi_choices: tuple[int, ...] = DPI_CHOICES,
    fade_ratio: float = 0.0,
) -> dict[str, Any]:
    """Draw the degradations for one document (shared by its pages, as one scanner run would).

    ``fade_ratio`` is the probability that the print itself has faded (:func:`fade_plan`); it is
    drawn last and only when positive, so plans of earlier corpora are reproduced unchanged.

    Examples
    --------
    >>> p = plan(np.random.default_rng(0))
    >>> p["dpi"] in DPI_CHOICES and "jpeg_quality" in p and "fade" not in p
    True
    >>> plan(np.random.default_rng(0), fade_ratio=1.0)["fade"]["ink"] <= 0.5
    True
    """
    binarise = rng.random() < 0.15
    p = {
        "dpi": int(rng.choice(dpi_choices)),
        "colour": bool(rng.random() < 0.35),
        "lighting": round(float(rng.uniform(0.12, 0.35)), 3) if rng.random() < 0.4 else None,
        "rotation_deg": round(float(np.clip(rng.normal(0, 1.2), -3, 3)), 2)
        if rng.random() < 0.6
        else None,
        "blur_sigma": round(float(rng.uniform(0.5, 1.4)), 2) if rng.random() < 0.4 else None,
        "downsample": round(float(rng.uniform(0.5, 0.75)), 2) if rng.random() < 0.25 else None,
        "noise_std": round(float(rng.uniform(3, 12)), 1) if rng.random() < 0.5 else None,
        "speckle": round(float(rng.uniform(0.0005, 0.003)), 4) if rng.random() < 0.15 else None,
        "binarise": binarise,
        "jpeg_quality": int(rng.integers(25, 76)) if not binarise and rng.random() < 0.7 else None,
    }
    if fade_ratio > 0:
        p["fade"] = fade_plan(rng) if rng.random() < fade_ratio else None
    return p


def fade_plan(rng: np.random.Generator) -> dict[str, float]:
    """Draw how a faded print looks: thermal paper that has aged or lain in the sun, a dry ribbon.

    ``ink`` is the share of the ink's darkness left (0.2 is a pale grey on white), ``patchy`` how
    much it varies over the page (a smooth field, 0 = even) and ``dropout`` the share of ink
    pixels gone (broken strokes, dot-matrix dots apart).

    Examples
    --------
    >>> sorted(fade_plan(np.random.default_rng(1)))
    ['dropout', 'ink', 'patchy']
    """
    return {
        "ink": round(float(rng.uniform(0.2, 0.5)), 3),
        "patchy": round(float(rng.uniform(0.0, 0.5)), 3),
        "dropout": round(float(rng.uniform(0.05, 0.35)), 3),
    }


def fade(img: np.ndarray, f: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Lighten the ink of a float page (0-255, paper white) as :func:`fade_plan` says.

    Examples
    --------
    >>> page = np.full((40, 40), 255.0); page[10:30, 10:30] = 0.0
    >>> out = fade(page, {"ink": 0.25, "patchy": 0.0, "dropout": 0.0}, np.random.default_rng(0))
    >>> float(out[20, 20]), float(out[0, 0])
    (191.25, 255.0)
    """
    h, w = img.shape[:2]
    strength = np.full((h, w), f["ink"], dtype=np.float32)
    if f["patchy"]:
        coarse = rng.random((4, 4)).astype(np.float32)
        smooth = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC).clip(0, 1)
        strength *= 1.0 - f["patchy"] * smooth
    if f["dropout"]:
        strength *= rng.random((h, w)) >= f["dropout"]
    if img.ndim == 3:
        strength = strength[..., None]
    return 255.0 - (255.0 - img) * strength


def degrade(img: np.ndarray, p: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """Apply a :func:`plan` to one RGB page; returns uint8 RGB (colour) or grey."""
    out = img.astype(np.float32)
    if p.get("fade"):
        out = fade(out, p["fade"], rng)
    if not p["colour"]:
        out = cv2.cvtColor(out, cv2.COLOR_RGB2GRAY)
    else:  # slightly warm, off-white paper
        out = out * np.array([0.97, 0.95, 0.9], dtype=np.float32)
    h, w = out.shape[:2]
    if p["lighting"]:
        # A smooth gradient from one corner: a lamp or the book fold darkening part of the page.
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        dist = np.hypot(xx - cx, yy - cy) / np.hypot(w, h)
        shade = 1.0 - p["lighting"] * dist
        out = out * (shade[..., None] if out.ndim == 3 else shade)
    if p["rotation_deg"]:
        m = cv2.getRotationMatrix2D((w / 2, h / 2), p["rotation_deg"], 1.0)
        fill = (235.0,) * (3 if out.ndim == 3 else 1)
        out = cv2.warpAffine(out, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=fill)
    if p["blur_sigma"]:
        out = cv2.GaussianBlur(out, (0, 0), p["blur_sigma"])
    if p["downsample"]:
        small = cv2.resize(
            out, None, fx=p["downsample"], fy=p["downsample"], interpolation=cv2.INTER_AREA
        )
        out = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    if p["noise_std"]:
        out = out + rng.normal(0, p["noise_std"], out.shape).astype(np.float32)
    if p["speckle"]:
        mask = rng.random((h, w)) < p["speckle"]
        out[mask] = 20.0
    out = np.clip(out, 0, 255).astype(np.uint8)
    if p["binarise"]:
        grey = out if out.ndim == 2 else cv2.cvtColor(out, cv2.COLOR_RGB2GRAY)
        _, out = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return out


def encode(img: np.ndarray, p: dict[str, Any]) -> tuple[bytes, str]:
    """PNG or JPEG bytes (with the DPI in the file) and the suffix."""
    buf = io.BytesIO()
    pil = Image.fromarray(img)
    if p["jpeg_quality"]:
        pil.save(buf, "JPEG", quality=p["jpeg_quality"], dpi=(p["dpi"], p["dpi"]))
        return buf.getvalue(), ".jpg"
    pil.save(buf, "PNG", dpi=(p["dpi"], p["dpi"]))
    return buf.getvalue(), ".png"


def scan(
    pdf: bytes,
    rng: np.random.Generator,
    dpi_choices: tuple[int, ...] = DPI_CHOICES,
    fade_ratio: float = 0.0,
) -> tuple[bytes, str, dict[str, Any]]:
    """Turn a digital PDF into a scan: one image for a one-page document, else an image-only PDF.

    Returns ``(data, suffix, plan)``; ``dpi_choices`` are the scanner resolutions to draw from,
    ``fade_ratio`` the probability of a faded print (:func:`plan`).
    """
    p = plan(rng, dpi_choices, fade_ratio)
    pages = [degrade(img, p, rng) for img in render_pdf(pdf, p["dpi"])]
    encoded = [encode(img, p) for img in pages]
    if len(encoded) == 1:
        return encoded[0][0], encoded[0][1], p
    return _image_pdf(encoded, pages, p["dpi"]), ".pdf", p


def _image_pdf(encoded, pages, dpi: float) -> bytes:
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    buf = io.BytesIO()
    c = Canvas(buf, invariant=1)
    for (data, _), img in zip(encoded, pages, strict=True):
        w, h = img.shape[1] * 72 / dpi, img.shape[0] * 72 / dpi
        c.setPageSize((w, h))
        c.drawImage(ImageReader(io.BytesIO(data)), 0, 0, w, h)
        c.showPage()
    c.save()
    return buf.getvalue()
