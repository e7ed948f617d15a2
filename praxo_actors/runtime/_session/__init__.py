"""A session: the actor that hosts one conversation, and what it needs to run, journal and
restore it."""
