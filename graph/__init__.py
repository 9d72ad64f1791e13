"""The loop wired and run: the graph (build.py, governed.py, children.py), running and reading runs, persistence, the server, people, presentation, evaluation and the command line."""
