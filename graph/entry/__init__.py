"""`warrant ask`: Entry routes a question to a direct answer from approved reference material or
to a governed run of one of the user's scenarios (`guards.entry` decides; this room gathers the
candidates, answers directly, and starts the run)."""
