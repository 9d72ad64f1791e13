"""Logs, specifications and run histories: the read tools over them."""
