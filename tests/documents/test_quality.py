"""Image-quality metrics: hand-computed cases, invariances and speed."""

from __future__ import annotations

import io
import math

import cv2
import numpy as np
import pytest
from PIL import Image

from confidence.documents.quality import (
    estimate_skew,
    measure,
    measure_page,
    measure_region,
    quality_grid,
)
from tests.fixtures import docs as fx


def _lines_image(angle: float = 0.0) -> np.ndarray:
    img = np.full((600, 800), 255, np.uint8)
    for y in range(80, 540, 28):
        cv2.line(img, (60, y), (740, y), 0, 4)
    return fx.rotate(img, angle) if angle else img


def test_blank_page_hand_computed():
    q = measure(np.full((120, 90), 200, np.uint8), dpi=150)
    assert q.ink_ratio == 0.0 and q.contrast == 0.0 and q.noise == 0.0 and q.sharpness == 0.0
    assert q.brightness == pytest.approx(200 / 255)
    assert math.isnan(q.char_height_px) and math.isnan(q.effective_resolution)
    assert q.skew_deg == 0.0 and q.dpi == 150.0


def test_half_black_page_hand_computed():
    img = np.full((100, 100), 255, np.uint8)
    img[:, :50] = 0
    q = measure(img, dpi=100)
    assert q.ink_ratio == pytest.approx(0.5)
    assert q.brightness == pytest.approx(0.5, abs=1e-6)
    assert q.contrast == pytest.approx(0.5, abs=1e-6)


def test_noise_estimate_recovers_sigma():
    rng = np.random.default_rng(1)
    for sigma in (5.0, 15.0):
        img = np.clip(128 + rng.normal(0, sigma, (400, 400)), 0, 255).astype(np.uint8)
        assert measure(img, dpi=100).noise == pytest.approx(sigma / 255, rel=0.15)


@pytest.mark.parametrize("angle", [-7.0, -2.0, 0.6, 3.0, 11.0])
def test_skew_within_half_degree(angle):
    assert estimate_skew(_lines_image(angle)) == pytest.approx(angle, abs=0.5)
    assert measure(_lines_image(angle), dpi=200).skew_deg == pytest.approx(angle, abs=0.5)


def test_blur_lowers_sharpness_and_jpeg_raises_blockiness(invoice_gray):
    clean = measure(invoice_gray, dpi=200)
    for radius in (1.0, 2.0):
        assert measure(fx.blur(invoice_gray, radius), dpi=200).sharpness < clean.sharpness
    buf = io.BytesIO()
    Image.fromarray(invoice_gray).save(buf, "JPEG", quality=15)
    jpeg = np.array(Image.open(buf))
    assert measure(jpeg, dpi=200).blockiness > clean.blockiness + 0.05
    assert clean.blockiness == pytest.approx(1.0, abs=0.15)


def test_effective_resolution_is_scale_free(invoice_gray):
    full = measure(invoice_gray, dpi=200)
    half = measure(fx.downscale(invoice_gray, 0.5), dpi=100)
    assert half.char_height_px == pytest.approx(full.char_height_px / 2, rel=0.15)
    assert half.effective_resolution == pytest.approx(full.effective_resolution, rel=0.15)


def test_measures_are_invariant_to_a_180_turn(invoice_gray):
    a = measure(invoice_gray, dpi=200)
    b = measure(np.ascontiguousarray(invoice_gray[::-1, ::-1]), dpi=200)
    for name in ("sharpness", "contrast", "brightness", "ink_ratio", "char_height_px"):
        assert getattr(b, name) == pytest.approx(getattr(a, name), rel=0.02)


def test_grid_locates_ink_and_flags_empty_tiles():
    img = np.full((80, 60), 255, np.uint8)
    img[5:15, 5:25] = 0
    g = quality_grid(img, rows=2, cols=2)
    assert g.ink_ratio[0] == pytest.approx(200 / 1200)
    assert g.ink_ratio[1:] == (0.0, 0.0, 0.0)
    assert not math.isnan(g.sharpness[0]) and all(math.isnan(v) for v in g.sharpness[1:])
    assert g.at((0.1, 0.1, 0.2, 0.2))["ink_ratio"] == g.ink_ratio[0]


def test_grid_sees_local_blur(invoice_gray):
    img = invoice_gray.copy()
    h = img.shape[0]
    img[h // 2 :] = fx.blur(img, 3.0)[h // 2 :]
    g = quality_grid(img, rows=2, cols=1)
    assert g.sharpness[1] < 0.2 * g.sharpness[0]


def test_measure_page_agrees_with_parts(invoice_gray):
    q, g = measure_page(invoice_gray, dpi=200, rows=4, cols=3)
    assert q == measure(invoice_gray, dpi=200)
    assert g.to_dict() == quality_grid(invoice_gray, rows=4, cols=3).to_dict()


def test_measure_region():
    img = np.full((200, 200), 255, np.uint8)
    img[:, 100:] = 0
    assert measure_region(img, (0.0, 0.0, 0.5, 1.0), dpi=100).ink_ratio == 0.0
    assert measure_region(img, (0.25, 0.0, 0.75, 1.0), dpi=100).ink_ratio == pytest.approx(0.5)
    with pytest.raises(ValueError, match="normalised"):
        measure_region(img, (0, 0, 150, 200))


def test_input_validation():
    with pytest.raises(ValueError, match="2-D grey image"):
        measure(np.zeros((0, 5), np.uint8), dpi=100)
    with pytest.raises(ValueError, match="dpi must be"):
        measure(np.zeros((5, 5), np.uint8), dpi=0)
    with pytest.raises(ValueError, match="rows and cols"):
        quality_grid(np.zeros((5, 5), np.uint8), rows=0)
    rgb = np.zeros((20, 20, 3), np.uint8)
    assert measure(rgb, dpi=100).brightness == 0.0
