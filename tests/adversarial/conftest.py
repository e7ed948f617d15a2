"""The standing adversarial suite: hostile inputs to every Core entry point (issue 16).

Each finding has a test that fails on 0.1; ``test_fuzz_entry_points.py`` fuzzes every entry point
for "returns, or raises a PraxoError with a code". The examples per target come from
``PRAXO_FUZZ_EXAMPLES`` (``make fuzz`` sets 10,000); under ``CI`` the sequence is derandomised (the
root conftest loads the ``ci`` profile). Timing bounds live in ``bench/adversarial.py``, not here.
"""
