//! Parquet in and out: what `export`, `audit` and `fingerprint` write reads back (by this
//! crate and, in python/tests, by pyarrow and Spark), `insert` and `query` read every
//! accepted column type, and bad Parquet fails with the file, row and column named and
//! stores nothing.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch};
use arrow_array::{StringArray, UInt64Array};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;

use crate::util::{path_str, simhashdb, simhashdb_bytes, text};

fn ok(args: &[&str]) -> String {
    let out = simhashdb(args, "");
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

fn fails(args: &[&str], says: &[&str]) -> String {
    let out = simhashdb(args, "");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?} should fail: {}",
        text(&out.stderr)
    );
    let stderr = text(&out.stderr);
    for s in says {
        assert!(stderr.contains(s), "{args:?}: expected {s:?} in {stderr}");
    }
    stderr
}

/// Writes columns (name, array) as a Parquet file.
fn write(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut writer =
        ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// Every row of a Parquet file, each column's value as text.
fn rows(path: &Path) -> Vec<Vec<String>> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        for row in 0..batch.num_rows() {
            let cells = batch
                .columns()
                .iter()
                .map(|c| arrow_cast::display::array_value_to_string(c, row).unwrap())
                .collect();
            rows.push(cells);
        }
    }
    rows
}

fn column_names(path: &Path) -> Vec<String> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    builder
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

fn sorted_lines(s: &str) -> Vec<String> {
    let mut lines: Vec<String> = s.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// A store with near duplicates (ids d0..d299, fingerprints in clusters of three within 2
/// bits, and fingerprints at and above 2^63).
fn store_with_documents(dir: &Path) -> String {
    let store = dir.join("store");
    let s = path_str(&store).to_string();
    ok(&["init", &s, "--expected-size", "1000"]);
    let mut tsv = String::new();
    for i in 0..300u64 {
        let base = (i / 3).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let fp = base ^ ((i % 3) * 0b101);
        tsv.push_str(&format!("d{i}\t{fp:016x}\n"));
    }
    std::fs::write(dir.join("docs.tsv"), tsv).unwrap();
    ok(&["insert", &s, path_str(&dir.join("docs.tsv"))]);
    s
}

#[test]
fn an_exported_store_reinserted_answers_identically() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_documents(dir.path());
    let exported = dir.path().join("export.parquet");
    ok(&["export", &store, "--output", path_str(&exported)]);
    assert_eq!(column_names(&exported), ["id", "fingerprint", "batch"]);
    let tsv = ok(&["export", &store]);
    let mut from_parquet: Vec<String> = rows(&exported)
        .into_iter()
        .map(|r| {
            format!(
                "{}\t{:016x}\t{}",
                r[0],
                r[1].parse::<i64>().unwrap() as u64,
                r[2]
            )
        })
        .collect();
    from_parquet.sort();
    assert_eq!(
        from_parquet,
        sorted_lines(&tsv),
        "int64 columns hold the 64 bits"
    );

    let copy = dir.path().join("copy");
    let c = path_str(&copy);
    ok(&["init", c, "--expected-size", "1000"]);
    ok(&["insert", c, path_str(&exported)]);
    let strip_batch = |s: &str| -> Vec<String> {
        sorted_lines(s)
            .iter()
            .map(|l| l.rsplit_once('\t').unwrap().0.to_string())
            .collect()
    };
    assert_eq!(strip_batch(&ok(&["export", c])), strip_batch(&tsv));
    // Every query answers the same, and queries read from the Parquet export are the same
    // queries as the tsv export.
    let queries_tsv = dir.path().join("q.tsv");
    std::fs::write(&queries_tsv, &tsv).unwrap();
    let by_tsv = ok(&["query", &store, "--input", path_str(&queries_tsv)]);
    assert_eq!(
        sorted_lines(&ok(&["query", c, "--input", path_str(&exported)])),
        sorted_lines(&by_tsv)
    );
    assert!(by_tsv.lines().count() > 300, "near duplicates match");
    // Parquet on stdin, known by its magic bytes.
    let bytes = std::fs::read(&exported).unwrap();
    let out = simhashdb_bytes(&["query", &store, "--input", "-"], &bytes);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sorted_lines(&text(&out.stdout)), sorted_lines(&by_tsv));
    // And by its magic bytes under another name.
    let unnamed = dir.path().join("export.bin");
    std::fs::copy(&exported, &unnamed).unwrap();
    let third = dir.path().join("third");
    ok(&["init", path_str(&third), "--expected-size", "1000"]);
    ok(&["insert", path_str(&third), path_str(&unnamed)]);
    assert_eq!(
        strip_batch(&ok(&["export", path_str(&third)])),
        strip_batch(&tsv)
    );
    // And inserted from stdin (its first read must hold the whole signature).
    let fourth = dir.path().join("fourth");
    ok(&["init", path_str(&fourth), "--expected-size", "1000"]);
    let out = simhashdb_bytes(&["insert", path_str(&fourth)], &bytes);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        strip_batch(&ok(&["export", path_str(&fourth)])),
        strip_batch(&tsv)
    );
}

#[test]
fn audit_pairs_and_clusters_as_parquet_equal_the_tsv() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_documents(dir.path());
    let pairs = dir.path().join("pairs.parquet");
    let clusters = dir.path().join("clusters.parquet");
    ok(&[
        "audit",
        &store,
        "--pairs",
        path_str(&pairs),
        "--clusters",
        path_str(&clusters),
    ]);
    assert_eq!(column_names(&pairs), ["id_a", "id_b", "distance"]);
    assert_eq!(column_names(&clusters), ["cluster_id", "id", "kept"]);
    let tsv_pairs = ok(&["audit", &store]);
    let tsv_clusters = ok(&["audit", &store, "--clusters", "-"]);
    let join =
        |rows: Vec<Vec<String>>| -> String { rows.iter().map(|r| r.join("\t") + "\n").collect() };
    assert_eq!(join(rows(&pairs)), tsv_pairs);
    assert_eq!(join(rows(&clusters)), tsv_clusters);
    // In each cluster of three, the first is 2 bits from each other, which are 4 apart.
    assert_eq!(rows(&pairs).len(), 200, "two pairs in each of 100 clusters");
}

/// The keep/drop lists as Parquet hold the lines' values, nulls where a line's field is
/// empty: audit's --duplicates and --keep, dedup's --duplicates (the `id` column is what NeMo
/// Curator's removal workflow reads), on a store with 2,000 copies of one page.
#[test]
fn keep_drop_lists_as_parquet_equal_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_documents(dir.path());
    let page = 0x0123_4567_89ab_cdefu64;
    let copies: String = (0..2_000)
        .map(|i| format!("copy{i:04}\t{:016x}\n", page ^ (i % 3)))
        .collect();
    std::fs::write(dir.path().join("copies.tsv"), copies).unwrap();
    ok(&[
        "insert",
        &store,
        path_str(&dir.path().join("copies.tsv")),
        "--label",
        "day 2",
    ]);
    let join =
        |rows: Vec<Vec<String>>| -> String { rows.iter().map(|r| r.join("\t") + "\n").collect() };

    let (dups, keep) = (
        dir.path().join("dups.parquet"),
        dir.path().join("keep.parquet"),
    );
    ok(&[
        "audit",
        &store,
        "--duplicates",
        path_str(&dups),
        "--keep",
        path_str(&keep),
        "--singletons",
    ]);
    assert_eq!(column_names(&dups), ["id", "kept_id", "distance"]);
    assert_eq!(column_names(&keep), ["id"]);
    assert_eq!(
        join(rows(&dups)),
        ok(&["audit", &store, "--duplicates", "-"])
    );
    assert_eq!(
        join(rows(&keep)),
        ok(&["audit", &store, "--keep", "-", "--singletons"])
    );
    assert!(rows(&dups).len() > 2_000, "the copies are dropped");

    // An input of copies (of stored documents and of each other) and new documents.
    let input: String = (0..3_000u64)
        .map(|i| match i % 3 {
            0 => format!("in{i}\t{page:016x}\n"),
            1 => format!("in{i}\t{:016x}\n", 0xfeed_0000_0000_0000u64 ^ (i % 2)),
            _ => format!(
                "in{i}\t{:016x}\n",
                (i / 3).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 1
            ),
        })
        .collect();
    let input_file = dir.path().join("in.tsv");
    std::fs::write(&input_file, input).unwrap();
    let dropped = dir.path().join("dropped.parquet");
    let dedup = |duplicates: &str| {
        let kept = dir.path().join("kept.tsv");
        ok(&[
            "dedup",
            &store,
            path_str(&input_file),
            "--output",
            path_str(&kept),
            "--duplicates",
            duplicates,
        ])
    };
    dedup(path_str(&dropped));
    assert_eq!(
        column_names(&dropped),
        [
            "id",
            "duplicate_of",
            "distance",
            "duplicate_batch",
            "duplicate_label",
            "duplicate_committed_utc"
        ]
    );
    let lines = dedup("-");
    assert_eq!(join(rows(&dropped)), lines);
    assert!(
        lines.contains("\t2\tday 2\t") && lines.contains("\t\t\t\n"),
        "{}",
        &lines[..300]
    );
}

#[test]
fn fingerprint_writes_parquet_that_insert_reads_like_text() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs.jsonl");
    let mut jsonl = String::new();
    for i in 0..50 {
        jsonl.push_str(&format!(
            "{{\"id\": {i}, \"text\": \"document number {} of the test corpus, with words {}\"}}\n",
            i % 10,
            i % 7
        ));
    }
    std::fs::write(&docs, jsonl).unwrap();
    let out = dir.path().join("fp.parquet");
    ok(&["fingerprint", path_str(&docs), "--output", path_str(&out)]);
    let printed = ok(&["fingerprint", path_str(&docs)]);
    let from_parquet: String = rows(&out)
        .iter()
        .map(|r| format!("{}\t{:016x}\n", r[0], r[1].parse::<i64>().unwrap() as u64))
        .collect();
    assert_eq!(from_parquet, printed);

    // The same documents as a Parquet text column with integer ids and other column names.
    let texts = dir.path().join("texts.parquet");
    let bodies: Vec<String> = std::fs::read_to_string(&docs)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    write(
        &texts,
        vec![
            (
                "doc",
                Arc::new(Int64Array::from_iter_values(0..50)) as ArrayRef,
            ),
            ("body", Arc::new(StringArray::from(bodies)) as ArrayRef),
        ],
    );
    let again = ok(&[
        "fingerprint",
        path_str(&texts),
        "--id-column",
        "doc",
        "--text-column",
        "body",
    ]);
    assert_eq!(again, printed);
}

#[test]
fn fingerprint_columns_may_be_int64_uint64_or_hex_strings() {
    let dir = tempfile::tempdir().unwrap();
    let fps: Vec<u64> = vec![0, 1, u64::MAX, 1 << 63, 0x0123_4567_89ab_cdef];
    let ids: Vec<String> = (0..fps.len()).map(|i| format!("x{i}")).collect();
    let id_column = || Arc::new(StringArray::from(ids.clone())) as ArrayRef;
    let forms: Vec<(&str, ArrayRef)> = vec![
        (
            "i64",
            Arc::new(Int64Array::from_iter_values(fps.iter().map(|&f| f as i64))),
        ),
        ("u64", Arc::new(UInt64Array::from(fps.clone()))),
        (
            "hex",
            Arc::new(StringArray::from_iter_values(
                fps.iter().map(|f| format!("{f:016x}")),
            )),
        ),
    ];
    let expected: String = ids
        .iter()
        .zip(&fps)
        .map(|(id, f)| format!("{id}\t{f:016x}\n"))
        .collect();
    for (name, column) in forms {
        let file = dir.path().join(format!("{name}.parquet"));
        write(&file, vec![("key", id_column()), ("fp", column)]);
        let store = dir.path().join(name);
        let s = path_str(&store);
        ok(&["init", s, "--expected-size", "100"]);
        ok(&[
            "insert",
            s,
            path_str(&file),
            "--id-column",
            "key",
            "--fingerprint-column",
            "fp",
        ]);
        let exported: String = sorted_lines(&ok(&["export", s]))
            .iter()
            .map(|l| l.rsplit_once('\t').unwrap().0.to_string() + "\n")
            .collect();
        assert_eq!(exported, expected, "{name}");
    }
}

#[test]
fn bad_parquet_is_named_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_documents(dir.path());
    let before = sorted_lines(&ok(&["export", &store]));
    let file = |name: &str| dir.path().join(name);
    let ids = || Arc::new(StringArray::from(vec!["n1", "n2", "n3"])) as ArrayRef;
    let good_fps = || Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef;

    write(
        &file("nofp.parquet"),
        vec![("id", ids()), ("other", good_fps())],
    );
    fails(
        &["insert", &store, path_str(&file("nofp.parquet"))],
        &[
            "nofp.parquet",
            "no column \"fingerprint\" or \"text\"",
            "id, other",
        ],
    );
    write(
        &file("noid.parquet"),
        vec![("name", ids()), ("fingerprint", good_fps())],
    );
    fails(
        &["insert", &store, path_str(&file("noid.parquet"))],
        &["no column \"id\""],
    );
    let floats = Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0])) as ArrayRef;
    write(
        &file("float.parquet"),
        vec![("id", ids()), ("fingerprint", floats)],
    );
    fails(
        &["insert", &store, path_str(&file("float.parquet"))],
        &["column \"fingerprint\" has type Float64", "int64"],
    );
    let narrow = Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef;
    write(
        &file("int32.parquet"),
        vec![("id", ids()), ("fingerprint", narrow)],
    );
    fails(
        &["insert", &store, path_str(&file("int32.parquet"))],
        &["has type Int32"],
    );
    let nulls = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])) as ArrayRef;
    write(
        &file("nulls.parquet"),
        vec![("id", ids()), ("fingerprint", nulls)],
    );
    fails(
        &["insert", &store, path_str(&file("nulls.parquet"))],
        &["nulls.parquet: row 2: null in column \"fingerprint\""],
    );
    let null_ids = Arc::new(StringArray::from(vec![Some("n1"), Some("n2"), None])) as ArrayRef;
    write(
        &file("nullid.parquet"),
        vec![("id", null_ids), ("fingerprint", good_fps())],
    );
    fails(
        &["insert", &store, path_str(&file("nullid.parquet"))],
        &["row 3: null in column \"id\""],
    );
    let bad_hex = Arc::new(StringArray::from(vec!["1", "zz", "3"])) as ArrayRef;
    write(
        &file("hex.parquet"),
        vec![("id", ids()), ("fingerprint", bad_hex)],
    );
    fails(
        &["insert", &store, path_str(&file("hex.parquet"))],
        &["row 2: \"zz\" is not a fingerprint"],
    );
    // A truncated file: a good one cut in half.
    write(
        &file("whole.parquet"),
        vec![("id", ids()), ("fingerprint", good_fps())],
    );
    let bytes = std::fs::read(file("whole.parquet")).unwrap();
    std::fs::write(file("cut.parquet"), &bytes[..bytes.len() / 2]).unwrap();
    fails(
        &["insert", &store, path_str(&file("cut.parquet"))],
        &["cut.parquet", "unreadable Parquet"],
    );
    // Good documents before a bad file in the same batch are not stored either.
    fails(
        &[
            "insert",
            &store,
            path_str(&file("whole.parquet")),
            path_str(&file("nulls.parquet")),
        ],
        &["row 2"],
    );
    assert_eq!(
        sorted_lines(&ok(&["export", &store])),
        before,
        "nothing was stored"
    );
    // Queries fail the same way.
    fails(
        &["query", &store, "--input", path_str(&file("cut.parquet"))],
        &["unreadable Parquet"],
    );
    // --skip-invalid skips null rows and counts them.
    let out = simhashdb(
        &[
            "insert",
            &store,
            path_str(&file("nulls.parquet")),
            "--skip-invalid",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("row 2"), "{}", text(&out.stderr));
    assert_eq!(
        sorted_lines(&ok(&["export", &store])).len(),
        before.len() + 2
    );
    // Text columns need a text scheme and string type.
    let numbers = Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef;
    write(
        &file("numtext.parquet"),
        vec![("id", ids()), ("text", numbers)],
    );
    fails(
        &["insert", &store, path_str(&file("numtext.parquet"))],
        &["column \"text\" has type Int64"],
    );
    // Parquet output needs a file.
    let out = simhashdb(&["export", &store, "--format", "parquet"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn a_spark_output_directory_is_read_part_by_part() {
    let dir = tempfile::tempdir().unwrap();
    let parts = dir.path().join("out.parquet");
    std::fs::create_dir(&parts).unwrap();
    for p in 0..3i64 {
        let ids: Vec<String> = (0..10).map(|i| format!("p{p}-{i}")).collect();
        write(
            &parts.join(format!("part-0000{p}-abc.snappy.parquet")),
            vec![
                ("id", Arc::new(StringArray::from(ids)) as ArrayRef),
                (
                    "fingerprint",
                    Arc::new(Int64Array::from_iter_values((0..10).map(|i| p * 1000 + i)))
                        as ArrayRef,
                ),
            ],
        );
        std::fs::write(
            parts.join(format!(".part-0000{p}-abc.snappy.parquet.crc")),
            "crc",
        )
        .unwrap();
    }
    std::fs::write(parts.join("_SUCCESS"), "").unwrap();
    let store = dir.path().join("s");
    ok(&["init", path_str(&store), "--expected-size", "100"]);
    let out = simhashdb(&["insert", path_str(&store), path_str(&parts)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(ok(&["export", path_str(&store)]).lines().count(), 30);
}

/// Parquet outputs get the user's umask, as every other output file: they are written to a
/// temporary file first, which must not make them private.
#[cfg(unix)]
#[test]
fn parquet_outputs_get_the_users_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let store = d.join("s");
    let s = store.to_str().unwrap();
    assert!(crate::util::simhashdb(&["init", s], "").status.success());
    let docs = "a\t0000000000000001\nb\t0000000000000003\n";
    assert!(crate::util::simhashdb(&["insert", s], docs)
        .status
        .success());
    let bin = env!("CARGO_BIN_EXE_simhashdb");
    for (umask, mode) in [("027", 0o640), ("022", 0o644)] {
        for (name, args) in [
            ("export", vec!["export", s, "--output"]),
            ("pairs", vec!["audit", s, "--pairs"]),
            ("clusters", vec!["audit", s, "--clusters"]),
        ] {
            let out = d.join(format!("{name}-{umask}.parquet"));
            let mut command = vec![bin.to_string()];
            command.extend(args.iter().map(|a| a.to_string()));
            command.push(out.to_str().unwrap().to_string());
            let status = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("umask {umask}; exec \"$@\""))
                .arg("sh")
                .args(&command)
                .status()
                .unwrap();
            assert!(status.success(), "{name}");
            let got = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
            assert_eq!(got, mode, "{name} under umask {umask}: {got:o}");
        }
    }
}

/// `export --sketch` to Parquet carries each document's sketch and batch; `insert` of it into
/// a store of the same sketch size restores the sketches and says the batches are not.
#[test]
fn a_sketched_parquet_export_restores_its_sketches() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for store in [&a, &b] {
        ok(&["init", path_str(store), "--sketch"]);
    }
    let docs: String = (0..50)
        .map(|i| {
            format!(
                "{{\"id\": \"d{i}\", \"text\": \"page {i} about the {} things here\"}}\n",
                i * 7
            )
        })
        .collect::<String>()
        + "{\"id\": \"bare\", \"fingerprint\": \"00000000000000ff\"}\n";
    let input = dir.path().join("docs.jsonl");
    std::fs::write(&input, docs).unwrap();
    ok(&["insert", path_str(&a), path_str(&input)]);
    let export = dir.path().join("export.parquet");
    ok(&[
        "export",
        path_str(&a),
        "--sketch",
        "--output",
        path_str(&export),
    ]);
    assert_eq!(
        column_names(&export),
        ["id", "fingerprint", "batch", "sketch"]
    );
    let out = simhashdb(&["insert", path_str(&b), path_str(&export)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("\"batch\" column is not restored"),
        "{}",
        text(&out.stderr)
    );
    let sketched = |store: &Path| {
        sorted_lines(&ok(&[
            "export",
            path_str(store),
            "--sketch",
            "--format",
            "jsonl",
        ]))
        .into_iter()
        .map(|line| {
            let mut v: serde_json::Value = serde_json::from_str(&line).unwrap();
            v.as_object_mut().unwrap().remove("batch");
            v.to_string()
        })
        .collect::<Vec<_>>()
    };
    let restored = sketched(&b);
    assert_eq!(restored, sketched(&a));
    assert_eq!(
        restored.iter().filter(|l| l.contains("\"sketch\"")).count(),
        50
    );
    // Into a store without sketches: read, and said to be dropped.
    let plain = dir.path().join("plain");
    ok(&["init", path_str(&plain)]);
    let out = simhashdb(&["insert", path_str(&plain), path_str(&export)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("\"sketch\" column is not read"),
        "{}",
        text(&out.stderr)
    );
}
