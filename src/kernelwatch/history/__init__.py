"""`python -m kernelwatch.history COMMAND`: the history store (src/kernelwatch/storage/history) from the command line.

One module per command (cmd_*.py), listed in cli.COMMANDS; see cli.py for what a command module provides.
The analysis over a case's series lives here too: change points (steps.py), the static
dashboard (site.py, drawn by chart.py and sparklines.py, its ratios from reference.py) and
bisection by same-run A/B (bisect.py). May import every room before it (units, metrics,
timing, verdict, storage, ab, report), never the plugin.
"""
