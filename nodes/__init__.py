"""LangGraph node functions: admit, choose, guard, execute, handover."""
