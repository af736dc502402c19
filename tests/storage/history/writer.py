"""A separate process writing to a history store, for the concurrency and killed-writer tests.

    python tests/storage/history/writer.py URL record FIRST COUNT GO_FILE
        prints "ready", waits for GO_FILE, opens the store and records the synthetic runs
        FIRST .. FIRST+COUNT-1; prints their ids as a JSON list
    python tests/storage/history/writer.py URL hang FIRST
        records run FIRST but stops inside its transaction, after the cases' INSERT has run,
        prints "inside" and sleeps (the test kills it there)
"""

import json
import sys
import time
from pathlib import Path

from sqlalchemy import event

from kernelwatch.storage.history import open_store
from maintainers.support.synthetic_history import make_document

url, mode, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "record":
    count, go = int(sys.argv[4]), Path(sys.argv[5])
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.005)
    with open_store(url) as store:
        ids = [store.record_run(make_document(first + i, cases=20), outcome="passed", profile="nightly")
               for i in range(count)]
    print(json.dumps(ids), flush=True)
elif mode == "hang":
    store = open_store(url)

    @event.listens_for(store.engine, "after_cursor_execute")
    def _stop_inside(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO CASES"):
            print("inside", flush=True)
            time.sleep(600)

    store.record_run(make_document(first, cases=20), outcome="passed", profile="nightly")
    print("the transaction was not interrupted", flush=True)
