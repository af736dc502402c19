"""What a person reads: the session's report and terminal summary, tables and plots of stored runs.

Owns a session's findings (findings.py: the one record its report is built from), the report
and terminal summary of a session (session_report.py), their sections (markdown.py: the one
table builder; accuracy.py, energy.py, phases.py) and the README's performance table, roofline
and trend plots (plots.py). May import every room before it (units, metrics, timing, verdict,
storage, ab, cause); nothing here measures.
"""
