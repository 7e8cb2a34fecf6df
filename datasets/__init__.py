"""Dataset folders, corpus converters, synthetic invoices and correctness.

Imported as ``confidence.datasets``.
"""
