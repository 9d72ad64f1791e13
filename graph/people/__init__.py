"""What waits for people across runs: the inbox's data and its local web app."""
