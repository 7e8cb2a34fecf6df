"""Calibration, metrics and guaranteed thresholds (``confidence.calibration``)."""
