"""Measurement, error metrics, baselines and verdicts for the kernel suite."""
