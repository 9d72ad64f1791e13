"""Rendering for people and for tracing: the handover, ledger lines, spans."""
