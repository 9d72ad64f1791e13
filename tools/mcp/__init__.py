"""Tools from Model Context Protocol servers, as a manifest names and pins them (`spec.py`), and the
client that lists and calls them (`client.py`). No LangGraph here: the guard decides, the executor
calls."""
