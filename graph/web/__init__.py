"""`warrant web`: runs, their handovers and their events live, the inbox, and shared artifacts, on
127.0.0.1 for the people its operator names."""
