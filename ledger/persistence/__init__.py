"""Where runs are kept: savers and the fence, the PostgreSQL saver, retention."""
