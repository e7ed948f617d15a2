"""Language-neutral conformance vectors and their runner (``python -m conformance``)."""
