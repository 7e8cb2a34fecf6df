"""Dataset folders, corpus converters, synthetic invoices and correctness (``confidence.datasets``)."""
