//! The shared handle: writes one at a time from any thread, commits visible when a write
//! returns, other writers' commits as the refresh policy says, merges by the store's policy,
//! and a write that panics leaves the store as it was and the handle usable.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use simhashdb::{Batch, CompactionPolicy, Database, DatabaseOptions, Event, Settings, Store};

fn batch(ids: std::ops::Range<u64>) -> Batch {
    let mut batch = Batch::new();
    for i in ids {
        batch
            .push(&format!("doc-{i}"), i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .unwrap();
    }
    batch
}

/// Commits `batch(ids)` through a writer of its own, as another process would (the lock is
/// per open file).
fn insert_elsewhere(path: &std::path::Path, ids: std::ops::Range<u64>) {
    let mut other = Store::open(path).unwrap();
    other.insert(&batch(ids), None).unwrap();
}

/// `write`, tried again while it finds the store locked, for a second at most. A lock just
/// released can still be held for an instant by a child another test is starting: a fork
/// shares the lock file's descriptor until the child's exec closes it.
fn retry_locked<T>(mut write: impl FnMut() -> simhashdb::Result<T>) -> simhashdb::Result<T> {
    for _ in 0..100 {
        match write() {
            Err(simhashdb::Error::Locked { .. }) => std::thread::sleep(Duration::from_millis(10)),
            other => return other,
        }
    }
    write()
}

/// Options looking for other processes' commits after `refresh_after` (on reads, or on a
/// thread of their own with `refresh_in_background`), merging inside the write or not.
fn options(
    refresh_after: Option<Duration>,
    refresh_in_background: bool,
    compact_in_background: bool,
) -> DatabaseOptions {
    DatabaseOptions {
        refresh_after,
        refresh_in_background,
        compact_in_background,
        ..DatabaseOptions::default()
    }
}

#[test]
fn a_write_is_visible_when_it_returns_and_other_writers_as_refresh_says() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    drop(Store::create(&path, Settings::default()).unwrap());
    let db = Database::open(&path, options(None, false, false)).unwrap();
    db.write(|store| store.insert(&batch(0..10), None)).unwrap();
    assert_eq!(db.snapshot().unwrap().documents(), 10);

    insert_elsewhere(&path, 10..15);
    assert_eq!(
        db.snapshot().unwrap().documents(),
        10,
        "manual: not seen yet"
    );
    assert!(db.refresh().unwrap());
    assert_eq!(db.snapshot().unwrap().documents(), 15);

    // A look is due only once the interval has passed since the last.
    let hourly = Database::open(
        &path,
        options(Some(Duration::from_secs(3600)), false, false),
    )
    .unwrap();
    assert_eq!(hourly.snapshot().unwrap().documents(), 15);
    insert_elsewhere(&path, 15..16);
    assert_eq!(hourly.snapshot().unwrap().documents(), 15);
    assert!(hourly.refresh().unwrap());
    assert_eq!(hourly.snapshot().unwrap().documents(), 16);

    let on_read = Database::open(&path, options(Some(Duration::ZERO), false, false)).unwrap();
    insert_elsewhere(&path, 16..20);
    assert_eq!(on_read.snapshot().unwrap().documents(), 20);

    let every =
        Database::open(&path, options(Some(Duration::from_millis(10)), true, false)).unwrap();
    insert_elsewhere(&path, 20..21);
    let mut seen = 0;
    for _ in 0..500 {
        seen = every.snapshot().unwrap().documents();
        if seen == 21 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(seen, 21, "the refresh thread never loaded the commit");
}

#[test]
fn writes_from_many_threads_take_turns_and_all_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    drop(Store::create(&path, Settings::default()).unwrap());
    let db = Database::open(&path, options(None, false, true)).unwrap();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..5u64 {
                    let start = (t * 5 + i) * 10;
                    db.write(|store| store.insert(&batch(start..start + 10), None))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // The last merge may still run: a write waits for it.
    db.write(|_| Ok::<_, simhashdb::Error>(())).unwrap();
    let snapshot = db.snapshot().unwrap();
    assert_eq!(snapshot.documents(), 200);
    for i in (0..200u64).step_by(37) {
        let fp = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let ids: Vec<String> = snapshot
            .query(fp, 0)
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(ids, [format!("doc-{i}")]);
    }
}

#[test]
fn background_merges_follow_the_policy_and_are_told() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let policy = CompactionPolicy {
        max_runs: 2,
        merge_factor: 2,
    };
    drop(Store::create_with(&path, Settings::default(), Default::default(), policy).unwrap());
    let events = Arc::new(Mutex::new(Vec::new()));
    let told = Arc::clone(&events);
    let db = Database::open(
        &path,
        DatabaseOptions {
            on_event: Some(Arc::new(move |e: Event| {
                told.lock().unwrap().push(format!("{e:?}"))
            })),
            ..options(None, false, true)
        },
    )
    .unwrap();
    for i in 0..6u64 {
        db.write(|store| store.insert(&batch(i * 10..i * 10 + 10), None))
            .unwrap();
        // Inserts leave the merge to the handle: each commits exactly its one run.
    }
    db.write(|_| Ok::<_, simhashdb::Error>(())).unwrap();
    assert!(!db.compacting());
    let snapshot = db.snapshot().unwrap();
    assert_eq!(snapshot.documents(), 60);
    assert!(
        snapshot.run_count() <= 2,
        "{} runs after the background merges",
        snapshot.run_count()
    );
    let events = events.lock().unwrap();
    assert!(
        events.iter().any(|e| e.starts_with("Compacted")),
        "no merge was told: {events:?}"
    );
}

#[test]
fn a_panicking_write_leaves_the_store_as_it_was_and_releases_the_turn_and_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    drop(Store::create(&path, Settings::default()).unwrap());
    let db = Database::open(&path, options(None, false, false)).unwrap();
    db.write(|store| store.insert(&batch(0..5), None)).unwrap();
    // Another process's writer is refused by name while it holds the lock.
    let other = Store::open(&path).unwrap();
    let refused = db.write(|store| store.insert(&batch(20..21), None));
    assert!(
        matches!(refused, Err(simhashdb::Error::Locked { .. })),
        "{refused:?}"
    );
    drop(other);

    let panicked = retry_locked(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            db.write(|store| -> simhashdb::Result<()> {
                let mut insertion = store.begin_insert(None);
                insertion.append(batch(5..10))?;
                panic!("a bug in the middle of a write");
            })
        }))
        .map_or(Ok(true), |wrote| wrote.map(|()| false))
    });
    assert!(matches!(panicked, Ok(true)), "{panicked:?}");
    assert!(
        !db.refresh().unwrap(),
        "the panicking write committed something"
    );
    assert_eq!(db.snapshot().unwrap().documents(), 5);
    // The handle's turn and the store's lock were both released: the next write goes
    // through (within a minute, rather than hanging the test).
    let (done, wait) = std::sync::mpsc::channel();
    let writer = db.clone();
    std::thread::spawn(move || {
        let wrote = retry_locked(|| writer.write(|store| store.insert(&batch(10..12), None)));
        let _ = done.send(wrote.is_ok());
    });
    assert_eq!(wait.recv_timeout(Duration::from_secs(60)), Ok(true));
    drop(Store::open(&path).unwrap());
    assert_eq!(db.snapshot().unwrap().documents(), 7);
}

#[test]
fn a_write_that_removes_debris_tells_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    drop(Store::create(&path, Settings::default()).unwrap());
    let events = Arc::new(Mutex::new(Vec::new()));
    let told = Arc::clone(&events);
    let db = Database::open(
        &path,
        DatabaseOptions {
            on_event: Some(Arc::new(move |e: Event| {
                if let Event::RemovedDebris(debris) = e {
                    told.lock()
                        .unwrap()
                        .extend(debris.into_iter().map(|d| d.path));
                }
            })),
            ..options(None, false, false)
        },
    )
    .unwrap();
    // What a writer killed before its commit leaves: a run directory no catalog names.
    let debris = path.join("runs").join("0000000077");
    std::fs::create_dir(&debris).unwrap();
    std::fs::write(debris.join("docs.redb"), [0u8; 100]).unwrap();
    db.write(|store| store.insert(&batch(0..10), None)).unwrap();
    assert!(!debris.exists());
    assert_eq!(*events.lock().unwrap(), vec![debris]);
    // The next write finds none and tells nothing more.
    db.write(|store| store.insert(&batch(10..20), None))
        .unwrap();
    assert_eq!(events.lock().unwrap().len(), 1);
}

/// The handle's operations: an insert from a source is visible when it returns; a dedup that
/// inserts keeps what no stored document is near and commits it in the same write; one that
/// only reads changes nothing.
#[test]
fn insert_and_dedup_from_a_source_through_the_handle() {
    use simhashdb::{DedupOptions, InsertOptions, ReadOptions, Source};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    Store::create(&path, Settings::default()).unwrap();
    let db = Database::open(&path, options(None, false, false)).unwrap();
    let read = ReadOptions::default();
    let body = b"a\t0123456789abcdef\n";
    let labelled = InsertOptions {
        label: Some("day-1".into()),
        ..InsertOptions::default()
    };
    let source = Source::Bytes {
        bytes: body,
        name: "body",
    };
    let inserted = db.insert_from([source], &labelled, &read).unwrap();
    assert_eq!(inserted.inserted, 1);
    assert_eq!(db.current().batches()[0].label.as_deref(), Some("day-1"));

    // b is 1 bit from the stored a; c is far from everything.
    let new = b"b\t0123456789abcdee\nc\tfedcba9876543210\n";
    let source = || Source::Bytes {
        bytes: new,
        name: "body",
    };
    let only_read = db
        .dedup_from(source(), &DedupOptions::default(), &read)
        .unwrap();
    assert_eq!(only_read.duplicates_of_stored, 1);
    assert_eq!(
        db.current().documents(),
        1,
        "a dedup that only reads stores nothing"
    );
    let inserting = DedupOptions {
        insert: Some(InsertOptions::default()),
        ..DedupOptions::default()
    };
    let answer = db.dedup_from(source(), &inserting, &read).unwrap();
    let verdicts = answer.results.as_deref().unwrap();
    let kept: Vec<bool> = verdicts.iter().map(|v| v.kept).collect();
    assert_eq!(kept, [false, true]);
    assert_eq!(verdicts[0].duplicate_of.as_deref(), Some("a"));
    assert_eq!(answer.inserted, 1);
    assert_eq!(db.current().documents(), 2);

    // A bad label is refused before anything is read or written.
    let bad = InsertOptions {
        label: Some("a\tb".into()),
        ..InsertOptions::default()
    };
    let source = Source::Bytes {
        bytes: body,
        name: "body",
    };
    let e = db.insert_from([source], &bad, &read).unwrap_err();
    assert_eq!(e.kind(), simhashdb::ErrorKind::Usage, "{e}");
    assert_eq!(db.current().documents(), 2);
}

/// The handle's dedup of files: one that only reads writes its outputs and stores nothing;
/// one that inserts commits the kept documents. A snapshot refuses to insert, and a dedup of
/// a source refuses output files, rather than ignoring either.
#[test]
fn dedup_of_files_through_the_handle_and_what_each_dedup_refuses() {
    use simhashdb::{DedupOptions, ErrorKind, InsertOptions, ReadOptions, Source};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    Store::create(&path, Settings::default()).unwrap();
    let db = Database::open(&path, options(None, false, false)).unwrap();
    let read = ReadOptions::default();
    let stored = Source::Bytes {
        bytes: b"a\t0123456789abcdef\n",
        name: "body",
    };
    db.insert_from([stored], &InsertOptions::default(), &read)
        .unwrap();
    // b is 1 bit from the stored a; c is far from everything.
    let day = dir.path().join("day.tsv");
    std::fs::write(&day, "b\t0123456789abcdee\nc\tfedcba9876543210\n").unwrap();
    let inputs = [day];
    let (kept, dropped) = (dir.path().join("kept.tsv"), dir.path().join("dropped.tsv"));
    let only_read = DedupOptions {
        output: Some(kept.clone()),
        duplicates: Some(dropped.clone()),
        ..DedupOptions::default()
    };
    let mut stdout = Vec::new();
    let summary = db
        .dedup_files(&inputs, &only_read, &read, &mut stdout)
        .unwrap();
    assert_eq!((summary.kept, summary.duplicates_of_stored), (1, 1));
    assert_eq!(
        summary.results, None,
        "a dedup of files writes its verdicts out"
    );
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "c\tfedcba9876543210\n"
    );
    assert!(std::fs::read_to_string(&dropped)
        .unwrap()
        .starts_with("b\ta\t1\t"));
    assert!(stdout.is_empty());
    assert_eq!(
        db.current().documents(),
        1,
        "a dedup that only reads stores nothing"
    );

    let inserting = DedupOptions {
        insert: Some(InsertOptions::default()),
        ..only_read.clone()
    };
    let summary = db
        .dedup_files(&inputs, &inserting, &read, &mut stdout)
        .unwrap();
    assert_eq!((summary.inserted, summary.batch.is_some()), (1, true));
    assert_eq!(db.current().documents(), 2);

    // A snapshot only reads: an insert asked of it is refused, not ignored.
    let snapshot = db.current();
    let e = snapshot
        .dedup_files(&inputs, &inserting, &read, &mut stdout, &())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input, "{e}");
    let source = Source::Bytes {
        bytes: b"d\t0000000000000001\n",
        name: "body",
    };
    let e = snapshot
        .dedup_from(source, &inserting, &read, &())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input, "{e}");
    // A dedup of a source answers its verdicts: output files are refused, not ignored.
    let source = Source::Bytes {
        bytes: b"d\t0000000000000001\n",
        name: "body",
    };
    let e = db.dedup_from(source, &only_read, &read).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input, "{e}");
    assert_eq!(db.current().documents(), 2);
}
