"""A separate process writing to a history store (tests/storage/history/writer.py), started for the concurrency and
killed-writer tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "tests" / "storage" / "history" / "writer.py"


def writer(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, str(WRITER), *args], stdout=subprocess.PIPE, text=True, env=env)
