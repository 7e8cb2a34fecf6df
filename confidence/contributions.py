"""TreeSHAP contributions of a LightGBM booster for many rows, tree by tree over split patterns.

LightGBM's ``pred_contrib=True`` runs TreeSHAP for every row over every tree: about a
millisecond per row for the default model (276 trees of 15 leaves), most of the cost of scoring
with reasons. A tree's contributions to a row depend only on the way the row goes at each split
of the tree (TreeSHAP follows the row's branch at every split and weighs both branches by their
cover), so rows that go the same way at every split get the same contributions from that tree.
:func:`contributions` therefore groups the rows, tree by tree, by their split decisions (a few
hundred patterns at most for 15 leaves, against thousands of rows), has LightGBM compute the
tree's contributions for one row of each group (``start_iteration=t, num_iteration=1``) and adds
them to every row of the group.

The split decisions are LightGBM's own (``Tree::NumericalDecision``): NaN goes the split's
default way when its missing type is NaN and is read as 0 otherwise; 0 goes the default way when
the missing type is Zero; values within ``1e-35`` of 0 are 0 (LightGBM drops them from a dense
row). The result is LightGBM's
``pred_contrib`` up to the order in which the floating-point terms of the trees are added
(1e-14 at most on the default model); the base value column is the same sums in the same order.
Boosters this does not cover (categorical splits, linear trees, several trees per iteration,
averaged random forests, more than 52 splits in a tree) and small batches get LightGBM's own
call.

Examples
--------
>>> import lightgbm as lgb
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(500, 4))
>>> X[::7, 2] = np.nan
>>> y = (X[:, 0] + np.nan_to_num(X[:, 2]) > 0).astype(int)
>>> booster = lgb.train({"objective": "binary", "num_leaves": 7, "verbosity": -1},
...                     lgb.Dataset(X, y), num_boost_round=20)
>>> C = contributions(booster, X, min_rows=1)
>>> bool(np.allclose(C, booster.predict(X, pred_contrib=True), rtol=0, atol=1e-12))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MIN_ROWS", "TreeSplits", "contributions", "tree_splits"]

MIN_ROWS = 256
"""Fewer rows go to LightGBM's own call: a call per tree costs more than TreeSHAP on them."""

_ZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold (a float constant)
_MISSING = {"None": 0, "Zero": 1, "NaN": 2}
_MAX_SPLITS = 52  # split decisions of a tree packed into one integer (exact as a float64)


@dataclass(frozen=True)
class TreeSplits:
    """The splits of one tree: feature, threshold, default-left flag and missing type (0 none,
    1 zero, 2 NaN) of each internal node."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    default_left: tuple[bool, ...]
    missing: tuple[int, ...]


def tree_splits(booster) -> list[TreeSplits] | None:
    """The splits of the booster's trees used in prediction, or None when :func:`contributions`
    must leave the booster to LightGBM (see the module docstring)."""
    model = booster.dump_model()
    if model.get("num_tree_per_iteration", 1) != 1 or model.get("average_output"):
        return None
    n_iter = booster.best_iteration if booster.best_iteration > 0 else booster.current_iteration()
    out = []
    for info in model["tree_info"][:n_iter]:
        nodes: list[dict] = []
        todo = [info["tree_structure"]]
        while todo:
            node = todo.pop()
            if "leaf_coeff" in node:  # a linear tree
                return None
            if "split_index" in node:
                if node.get("decision_type") != "<=" or node["missing_type"] not in _MISSING:
                    return None
                nodes.append(node)
                todo += [node["left_child"], node["right_child"]]
        if len(nodes) > _MAX_SPLITS:
            return None
        out.append(
            TreeSplits(
                tuple(int(n["split_feature"]) for n in nodes),
                tuple(float(n["threshold"]) for n in nodes),
                tuple(bool(n["default_left"]) for n in nodes),
                tuple(_MISSING[n["missing_type"]] for n in nodes),
            )
        )
    return out


def contributions(
    booster, X: np.ndarray, splits: list[TreeSplits] | None = None, *, min_rows: int = MIN_ROWS
) -> np.ndarray:
    """``booster.predict(X, pred_contrib=True)`` for a binary (one tree per iteration) booster,
    shape ``(n, n_features + 1)``, computed once per split pattern of each tree.

    ``splits`` are :func:`tree_splits` of the booster (worked out here when None; pass them to
    score many batches). Fewer than ``min_rows`` rows, or a booster without splits, go to
    LightGBM's own call.
    """
    X = np.asarray(X, dtype=np.float64)
    if len(X) < min_rows:
        return booster.predict(X, pred_contrib=True)
    splits = tree_splits(booster) if splits is None else splits
    if splits is None:
        return booster.predict(X, pred_contrib=True)
    # the values LightGBM's trees see: near-zero values are 0; NaN read as 0 where the split
    # has no NaN missing type
    V = np.ascontiguousarray(np.where(np.abs(X) <= _ZERO, 0.0, X).T)
    nan = np.isnan(V)
    V0 = np.where(nan, 0.0, V)
    n = len(X)
    out = np.zeros((X.shape[1] + 1, n))  # transposed: a feature's contributions contiguous
    for t, tree in enumerate(splits):
        left = np.empty((len(tree.feature), n), dtype=bool)  # each split: the rows going left
        for k, (f, thr, default_left, missing) in enumerate(
            zip(tree.feature, tree.threshold, tree.default_left, tree.missing, strict=True)
        ):
            if missing == 2:  # NaN compares False (goes right): only a default left is added
                np.less_equal(V[f], thr, out=left[k])
                if default_left:
                    left[k] |= nan[f]
            elif missing == 1:
                zero = np.abs(V0[f]) <= _ZERO
                left[k] = np.where(zero, default_left, V0[f] <= thr)
            else:
                np.less_equal(V0[f], thr, out=left[k])
        # the pattern of a row: its split decisions as the bits of an integer (exact in float64:
        # at most _MAX_SPLITS bits)
        weights = np.ldexp(1.0, np.arange(len(tree.feature)))
        code = (weights @ left.astype(np.float64)).astype(np.int64)
        first, group = _groups(code, len(tree.feature))
        C = booster.predict(X[first], pred_contrib=True, start_iteration=t, num_iteration=1)
        for j in np.flatnonzero((C != 0).any(axis=0)):  # the tree's features, its base value
            out[j] += C[:, j].take(group)
    return np.ascontiguousarray(out.T)


def _groups(code: np.ndarray, n_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """A row of each distinct code (any row of a group stands for it), and each row's group
    (position in that list)."""
    if n_bits > 16:
        _, first, group = np.unique(code, return_index=True, return_inverse=True)
        return first, group.reshape(-1)
    seen = np.zeros(1 << n_bits, dtype=bool)
    seen[code] = True
    distinct = np.flatnonzero(seen)
    position = np.zeros(1 << n_bits, dtype=np.intp)
    position[distinct] = np.arange(len(distinct))
    group = position[code]
    first = np.empty(len(distinct), dtype=np.intp)
    first[group] = np.arange(len(code))
    return first, group
