"""Entry point for `langgraph dev` / the LangGraph server: compiled without a checkpointer,
because the server supplies persistence (and refuses a graph that carries its own)."""

from graph.build import compile_graph

graph = compile_graph()
