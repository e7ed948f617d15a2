"""The kernel: the loop-owned state of a runtime (routing, admission, activation, pending runs
and their futures, versions) and the supervision tree it starts."""
