"""Events: the bus, its subscriptions and their delivery, sinks, and a run's event stream."""
