"""Dedup a Hugging Face dataset against a simhashdb store, remembering what it keeps.

    python examples/hf_datasets.py STORE INPUT.jsonl OUTPUT_DIR [NUM_PROC]

Fingerprints are computed in a batched `map` (natively, the GIL released) with the store's
scheme, in NUM_PROC worker processes (no store handle goes to them); `Store.dedup` decides
every document at once against the store and the earlier kept ones, inserting the kept ones
as one batch; `filter` keeps them. The kept rows go to OUTPUT_DIR (`save_to_disk`), with each
dropped row's match named in `duplicate_of` / `duplicate_batch` of OUTPUT_DIR-dropped.
"""

import sys

import datasets
import numpy as np

import simhashdb


def main(store_path: str, input_path: str, output: str, num_proc: int = 2) -> None:
    with simhashdb.Store.open(store_path) as store:
        scheme = store.scheme  # fingerprint as the store does

    ds = datasets.load_dataset("json", data_files=input_path, split="train")
    ds = ds.map(
        lambda batch: {"fingerprint": simhashdb.fingerprint_many(batch["text"], scheme)},
        batched=True,
        batch_size=10_000,
        num_proc=num_proc,
    )

    with simhashdb.Store.open(store_path) as store:
        verdicts = store.dedup(
            ds["id"], ds.with_format("numpy")["fingerprint"], insert=True, label="hf-datasets"
        )
    ds = ds.add_column("kept", verdicts["kept"].tolist())
    ds = ds.add_column("duplicate_of", verdicts["duplicate_of"])
    ds = ds.add_column("duplicate_batch", verdicts["duplicate_batch"].tolist())

    kept = ds.filter(lambda k: k, input_columns=["kept"], num_proc=num_proc)
    dropped = ds.filter(lambda k: not k, input_columns=["kept"], num_proc=num_proc)
    kept.remove_columns(["kept", "duplicate_of", "duplicate_batch"]).save_to_disk(output)
    dropped.save_to_disk(output + "-dropped")
    print(f"kept {len(kept)}, dropped {len(dropped)} (batch {verdicts['batch']})")
    assert np.count_nonzero(verdicts["kept"]) == len(kept)


if __name__ == "__main__":
    main(*sys.argv[1:4], *(int(n) for n in sys.argv[4:5]))
