"""Feature families (``confidence.features``): pure functions of recorded values.

Feature code never calls an LLM or reads files; it receives a :class:`~confidence.types.Document`
and recorded readings, so the same code scores live calls, cached runs and third-party extractions.
"""
