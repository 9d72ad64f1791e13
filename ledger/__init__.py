"""The run's record in LangGraph's store: its layout, commits and reads, seals, staged writes and
intents. Below the nodes: it imports the contract, the scenario, tools and guards, never `nodes/`
or `graph/` (what it needs from above, the caller hands in)."""
