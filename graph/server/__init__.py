"""The LangGraph server: its graphs and savers (`graphs.py`), auth, replicas and the memory graph."""
