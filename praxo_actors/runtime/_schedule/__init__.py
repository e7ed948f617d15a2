"""Durable schedules: when a session wakes itself, and the runtime's part that wakes it."""
