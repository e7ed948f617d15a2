"""One module per vector group, each with ``run_case(case)``."""
