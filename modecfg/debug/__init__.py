"""Debugging aids that work while the graph is built (test values)."""
