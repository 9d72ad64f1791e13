"""The LangGraph server: its entry points, auth, replicas and the memory graph."""
