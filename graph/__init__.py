"""State schema, wiring, persistence, the command line and the server entry point."""
