"""What users hold: ``Runtime``, ``SessionHandle`` and their helpers (config, results,
inspection, submission, shutdown)."""
