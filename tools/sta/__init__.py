"""STA reports: the scanner and reader, items, figures, names, counts, summaries and diffs."""
