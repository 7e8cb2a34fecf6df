"""Group-conditional (Mondrian) thresholds: groups of documents, fallback, guarantee per group."""

from __future__ import annotations

import math

import numpy as np
import pytest

from confidence import persistence
from confidence.calibration import ThresholdSelector
from confidence.calibration.groups import Grouping
from confidence.types import Document, ImageQuality, Page

TARGET, LEVEL = 0.9, 0.9
# P(correct | score s) per group, s ~ U(0, 1): digital PDFs are good everywhere, scans are
# overconfident. Accuracy above lam is the mean of a + b*s over [lam, 1] = a + b * (1 + lam) / 2.
CURVES = {"digital": (0.8, 0.2), "scan": (0.3, 0.7)}
SCAN_SHARE = 0.3


def _true_accuracy(group: str, lam: float) -> float:
    a, b = CURVES[group]
    return a + b * (1 + lam) / 2


def _draw(rng, n, scan_share=SCAN_SHARE):
    g = np.where(rng.uniform(size=n) < scan_share, "scan", "digital")
    s = rng.uniform(size=n)
    a = np.where(g == "scan", CURVES["scan"][0], CURVES["digital"][0])
    b = np.where(g == "scan", CURVES["scan"][1], CURVES["digital"][1])
    y = (rng.uniform(size=n) < a + b * s).astype(int)
    return s, y, g


def _fit(s, y, g, groups=True):
    return ThresholdSelector(target_accuracy=TARGET, confidence_level=LEVEL).fit(
        s, y, ["total"] * len(s), ["amount"] * len(s), groups=g if groups else None,
        grouping="source" if groups else None,
    )  # fmt: skip


def test_global_threshold_misses_the_target_on_scans():
    s, y, g = _draw(np.random.default_rng(0), 2000)
    lam = _fit(s, y, g, groups=False).lookup("total", "amount")[0]
    assert math.isfinite(lam)
    # valid on the mix ...
    mix = (1 - SCAN_SHARE) * _true_accuracy("digital", lam) + SCAN_SHARE * _true_accuracy(
        "scan", lam
    )
    assert mix >= TARGET
    # ... and far below the target on scans (measured on a large fresh sample as well)
    assert _true_accuracy("scan", lam) < 0.85
    s2, y2, g2 = _draw(np.random.default_rng(1), 200_000)
    on_scans = y2[(g2 == "scan") & (s2 >= lam)].mean()
    assert on_scans < 0.85


def test_group_thresholds_meet_the_target_on_each_group():
    rng = np.random.default_rng(42)
    met = {"digital": 0, "scan": 0}
    certified = {"digital": 0, "scan": 0}
    n_rep = 200
    for _ in range(n_rep):
        s, y, g = _draw(rng, 2000)
        sel = _fit(s, y, g)
        for grp in met:
            lam, src = sel.lookup("total", "amount", grp)
            assert src in ("group", "none")
            met[grp] += (not math.isfinite(lam)) or _true_accuracy(grp, lam) >= TARGET
            certified[grp] += math.isfinite(lam)
    assert met["scan"] >= 0.9 * n_rep and met["digital"] >= 0.9 * n_rep, met
    # not met by reviewing everything: most calibration draws certify a threshold per group
    assert certified["digital"] >= 0.9 * n_rep and certified["scan"] >= 0.5 * n_rep, certified


def test_small_group_falls_back_to_field_then_type_then_global():
    rng = np.random.default_rng(3)
    s = rng.uniform(size=2000)
    y = (rng.uniform(size=2000) < 0.85 + 0.15 * s).astype(int)
    fields = np.array(["total"] * 1900 + ["iban"] * 100)
    types = np.array(["amount"] * 1900 + ["id"] * 100)
    groups = np.array(["digital"] * 1850 + ["photo"] * 50 + ["digital"] * 100, dtype=object)
    sel = ThresholdSelector(target_accuracy=0.9, min_samples=200).fit(
        s, y, fields, types, groups=groups, grouping="source"
    )
    assert sel.lookup("total", "amount", "digital")[1] == "group"
    # 50 photos < min_samples: the field's own threshold
    assert sel.lookup("total", "amount", "photo") == sel.lookup("total", "amount")
    assert sel.group_stats_["total"]["photo"]["level"] == "fallback"
    assert sel.group_stats_["total"]["photo"]["n_samples"] == 50
    # iban: 100 < 200 for the field, the cell and its type -> global
    assert sel.lookup("iban", "id", "digital")[1] == "global"
    # unseen group and unseen field
    assert sel.lookup("total", "amount", "fax") == sel.lookup("total", "amount")
    assert sel.lookup("vat", "amount", "digital")[1] == "type"
    lam, src = sel.lookup_many(["total", "total", "iban"], None, ["digital", None, "photo"])
    assert src == ["group", "field", "global"]
    scores = np.array([0.99, 0.5, 0.0])
    accept = sel.predict(scores, ["total", "total", "iban"], None, ["digital", None, "photo"])
    assert accept.tolist() == (scores >= lam).tolist()


def test_uncertifiable_group_reviews_everything():
    rng = np.random.default_rng(5)
    s = rng.uniform(size=1000)
    g = np.where(np.arange(1000) < 500, "digital", "scan").astype(object)
    y = np.where(g == "scan", rng.uniform(size=1000) < 0.5, 1).astype(int)
    sel = ThresholdSelector(target_accuracy=0.9, min_samples=100).fit(s, y, ["f"] * 1000, groups=g)
    assert sel.lookup("f", None, "scan") == (math.inf, "none")
    assert sel.lookup("f", None, "digital")[1] == "group"


def test_round_trip_keeps_groups_and_grouping(tmp_path):
    s, y, g = _draw(np.random.default_rng(7), 2000)
    g = g.astype(object)
    g[:10] = None  # documents without a group are left out of the cells
    sel = _fit(s, y, g)
    path = sel.save(tmp_path / "t.json")
    back = ThresholdSelector.load(path)
    assert back.grouping_ == Grouping("source")
    assert back.group_thresholds_ == sel.group_thresholds_
    for grp in ("scan", "digital", None):
        assert back.lookup("total", "amount", grp) == sel.lookup("total", "amount", grp)
    assert persistence.to_dict(back)["format_version"] == 3
    assert sum(st["n_samples"] for st in back.group_stats_["total"].values()) == 1990


def test_groups_must_align():
    with pytest.raises(ValueError, match="groups must have one entry per score"):
        ThresholdSelector().fit([0.5, 0.6], [1, 1], ["a", "a"], groups=["x"])


def _page(source, quality=None):
    return Page(1, 100, 100, (), source, 300.0, quality=quality)


def _q(sharpness, noise=0.0, blockiness=1.0):
    return ImageQuality(sharpness, 0.2, 0.9, noise, 0.0, 300.0, 20.0, 4.8, blockiness, 0.1)


@pytest.mark.parametrize(
    ("qualities", "tier"),
    [
        ([_q(30000)], "good"),
        ([_q(30000, blockiness=1.25)], "fair"),
        ([_q(8000)], "fair"),
        ([_q(30000, noise=0.002)], "fair"),
        ([_q(1500)], "poor"),
        ([_q(30000), _q(30000, noise=0.01)], "poor"),  # worst page decides
        ([_q(float("nan"), blockiness=1.5)], "poor"),  # NaN measurement says nothing
    ],
)
def test_quality_tiers(qualities, tier):
    doc = Document("d", "d.png", tuple(_page("ocr", q) for q in qualities))
    assert Grouping("quality").group_of(doc) == tier


def test_groups_of_documents_and_metadata():
    digital = Document("d", "d.pdf", (_page("pdf"), _page("pdf")))
    mixed = Document("m", "m.pdf", (_page("pdf"), _page("ocr")))
    assert Grouping("source").group_of(digital) == "digital"
    assert Grouping("source").group_of(mixed) == "scan"
    assert Grouping("source").group_of(None) is None
    assert Grouping("quality").group_of(digital) == "good"  # words from the text layer
    assert Grouping("quality").group_of(mixed) is None  # the OCR page has no measurement
    blocky = Document("b", "b.pdf", (_page("pdf", _q(30000, blockiness=1.5)),))
    assert Grouping("quality").group_of(blocky) == "good"
    assert Grouping("language").group_of(None, {"language": "fr"}) == "fr"
    assert Grouping("meta.vendor").group_of(None, {"language": "fr"}) is None
    assert Grouping("meta.n_pages").group_of(None, {"n_pages": 2}) == "2"
    with pytest.raises(ValueError, match=r"unknown group key 'meta\.'"):
        Grouping("meta.")


def test_pooled_group_fallback_certifies_small_groups_on_their_pool():
    """Many fields, each with too few scans: the scans' pooled threshold protects them."""
    rng = np.random.default_rng(11)
    n_fields, per_field = 20, 600
    s, y, g = _draw(rng, n_fields * per_field, scan_share=0.1)
    fields = np.repeat([f"f{i}" for i in range(n_fields)], per_field)
    types = np.array(["a" if int(f[1:]) % 2 == 0 else "b" for f in fields])
    fit = {"groups": g, "grouping": "source"}
    plain = ThresholdSelector(target_accuracy=TARGET, min_samples=100).fit(
        s, y, fields, types, **fit
    )
    pooled = ThresholdSelector(
        target_accuracy=TARGET, min_samples=100, group_fallback="pooled"
    ).fit(s, y, fields, types, **fit)
    # ~60 scans per field < 100: "field" falls back to the mix, "pooled" to the scans' type pool
    missed = 0
    for i in range(n_fields):
        lam, src = plain.lookup(f"f{i}", None, "scan")
        assert src in ("field", "none")  # "none": the field's fixed sequence stopped at once
        missed += math.isfinite(lam) and _true_accuracy("scan", lam) < TARGET
        lam, src = pooled.lookup(f"f{i}", None, "scan")
        assert src == "type_group" and _true_accuracy("scan", lam) >= TARGET
        assert lam == pooled.group_pools_["scan"]["ab"[i % 2]]
    assert missed >= n_fields // 2
    # digital cells (~540 rows) have their own threshold in both
    assert pooled.lookup("f1", "b", "digital")[1] in ("group", "none")
    # an unseen field of an unseen type: the group's all-fields pool
    assert pooled.lookup("new", "c", "scan") == (pooled.group_pools_["scan"]["*"], "global_group")
    assert pooled.lookup("new", "c", None)[1] == "global"
    back = ThresholdSelector.from_dict(pooled.to_dict())
    assert back.group_pools_ == pooled.group_pools_
    assert back.lookup("f1", "b", "scan") == pooled.lookup("f1", "b", "scan")
