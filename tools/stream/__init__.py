"""Streaming a file: lines, read-ahead, regular expressions, literals."""
