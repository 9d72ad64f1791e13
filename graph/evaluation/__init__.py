"""Evaluation: suites, the deterministic judge, the model grader, the report."""
