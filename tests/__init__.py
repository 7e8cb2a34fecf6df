"""The test suite; its folders mirror the package (``tests/documents/`` for
``confidence.documents``, ...) and shared helpers live in ``tests/fixtures``."""
