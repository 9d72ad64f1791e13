"""Git repositories pinned at admission: the read tools over their history."""
