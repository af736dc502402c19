"""Judging a timed case: its record, the noise model, the labels, and the two ways to judge.

Owns the record of one case (record.py), the one vocabulary and Verdict type
(labels.py), the Mann-Whitney judge and input checks (stats.py), the noise
model (noise.py), judging against stored runs (against_baseline.py: the
model's baseline or this GPU's history) and the paired A/B statistic against a
git ref (paired.py), and a session's rules of judging (judging.py). May import kernelwatch.units and kernelwatch.timing (timer names,
MIN_PAIRS); it reads no file and no database: stored runs are handed to it.
"""
