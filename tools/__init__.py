"""Evidence tools: typed arguments, the approved-record registry, bounded excerpts.

Pure Python. Nothing here imports LangGraph or the other Warrant packages, so the tools can be read
and tested alone.
"""
