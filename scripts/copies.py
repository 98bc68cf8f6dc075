"""A corpus repeated under other ids, for timing inserts of more text than it holds.

    python3 scripts/copies.py CORPUS.jsonl OUT.jsonl COPIES

CORPUS is JSON Lines of {"id", "text"}; OUT gets each document COPIES times, copy c's id
suffixed with -c, copy after copy.
"""

import json
import sys

corpus, out_path, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(out_path, "w") as out:
    for copy in range(copies):
        for line in open(corpus):
            d = json.loads(line)
            out.write(json.dumps({"id": f"{d['id']}-{copy}", "text": d["text"]}) + "\n")
