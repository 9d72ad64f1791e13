"""Delivery: a run's handover as files people keep (artifacts by revision), who may read them
(shares), and the pages that show runs live (`graph/web/`)."""
