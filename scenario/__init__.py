"""Approved records: manifests, the registry, families, digests, reading, drafts, skills."""
