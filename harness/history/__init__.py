"""`python -m harness.history COMMAND`: the history store (harness/storage/history) from the command line.

One module per command (cmd_*.py), listed in cli.COMMANDS; see cli.py for what a command module provides.
"""
