"""What a person reads: markdown reports of verdicts, tables and plots of stored runs.

Owns the one table builder and the one report (markdown.py) and the README's
performance table, roofline and trend plots (plots.py). May import every room
before it (units, metrics, timing, verdict, storage, ab); nothing here measures.
"""
