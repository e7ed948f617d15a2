"""The public API inventory (``api/<version>.txt``) and its check (``python -m api.check``)."""
