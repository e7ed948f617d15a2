"""The store side: the actor that is the one writer of the session log, and the store lease."""
