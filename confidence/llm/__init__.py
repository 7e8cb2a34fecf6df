"""LLM clients behind one protocol (``confidence.llm``)."""
