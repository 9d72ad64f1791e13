"""The authority kernel: the action document, refusal codes and the guard's decision.

Pure Python and pydantic. It imports tool contracts (argument models, the record registry) but never
LangGraph and never calls a tool's `run`.
"""
