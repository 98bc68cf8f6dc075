//! `simhashdb serve` as clients see it: the real server on an ephemeral loopback port.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::server::{tuple, Server};
use crate::util::{brute_force, path_str, simhashdb, text};

/// A small random generator (splitmix64): reproducible stores without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `fp` with `bits` random bits flipped (some may repeat).
    fn near(&mut self, fp: u64, bits: u32) -> u64 {
        (0..bits).fold(fp, |f, _| f ^ (1 << (self.next() % 64)))
    }
}

/// Inserts `docs` with the CLI as one batch.
fn cli_insert(store: &Path, docs: &[(String, u64)], extra: &[&str]) {
    let lines: String = docs
        .iter()
        .map(|(id, fp)| format!("{id}\t{fp:016x}\n"))
        .collect();
    let mut args = vec!["insert", path_str(store)];
    args.extend_from_slice(extra);
    let out = simhashdb(&args, &lines);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

fn init(store: &Path, extra: &[&str]) {
    let mut args = vec!["init", path_str(store)];
    args.extend_from_slice(extra);
    let out = simhashdb(&args, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn answers_equal_brute_force_over_random_stores_at_every_distance() {
    for (seed, settings) in [
        (1u64, &["--blocks", "4", "--distance", "2"][..]),
        (2, &["--blocks", "5", "--distance", "3"][..]),
        (
            3,
            &["--blocks", "6", "--distance", "4", "--shards", "16"][..],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s");
        init(&store, settings);
        let mut rng = Rng(seed);
        let mut model = BTreeMap::new();
        let bases: Vec<u64> = (0..40).map(|_| rng.next()).collect();
        // Three batches (three runs), later ones replacing some ids and clustering near-duplicates.
        for batch in 0..3 {
            let docs: Vec<(String, u64)> = (0..400)
                .map(|i| {
                    let id = format!("d{}", (i * 7 + batch * 131) % 900);
                    let base = bases[(rng.next() % 40) as usize];
                    let bits = (rng.next() % 6) as u32;
                    (id, rng.near(base, bits))
                })
                .collect();
            cli_insert(&store, &docs, &["--no-compact"]);
            model.extend(docs);
        }
        let server = Server::start(&store, &[]);
        let k = settings[3].parse::<u32>().unwrap();
        let mut queries: Vec<u64> = model.values().step_by(9).copied().collect();
        queries.extend(bases.iter().map(|&b| rng.near(b, 3)));
        queries.extend((0..20).map(|_| rng.next()));
        for d in 0..=k {
            let answers = server.query(&queries, d);
            assert_eq!(answers.len(), queries.len());
            for (q, got) in queries.iter().zip(&answers) {
                assert_eq!(
                    got,
                    &brute_force(&model, *q, d),
                    "query {q:016x} at distance {d}"
                );
            }
        }
        for &q in queries.iter().take(20) {
            let (status, body) = server.get(&format!("/v1/query?fingerprint={q:016x}"));
            assert_eq!(status, 200, "{body}");
            let got: Vec<_> = body["matches"]
                .as_array()
                .unwrap()
                .iter()
                .map(tuple)
                .collect();
            assert_eq!(got, brute_force(&model, q, k));
        }
    }
}

#[test]
fn every_endpoint_answers_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &[]);
    let server = Server::start(&store, &[]);
    assert_eq!(server.get("/livez"), (200, json!({ "status": "alive" })));
    assert_eq!(server.get("/readyz").1["status"], "ready");

    // Insert: TSV detected, JSON Lines by Content-Type, with texts; the summary of insert --json.
    let (status, body) = server.post(
        "/v1/insert?label=day-1",
        "a\t0123456789abcdef\nb\t0123456789abcdee\n",
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["batch"], 1);
    assert_eq!(body["inserted"], 2);
    assert_eq!(body["lines"], 2);
    for field in [
        "replaced",
        "unchanged",
        "superseded",
        "skipped",
        "new_fingerprints",
        "runs",
    ] {
        assert!(body[field].is_u64(), "{field} in {body}");
    }
    let text = "the quick brown fox jumps over the lazy dog again and again";
    let (status, body) = server.post_with(
        "/v1/insert",
        &format!("{}\n", json!({ "id": "t", "text": text })),
        &[("Content-Type", "application/x-ndjson")],
    );
    assert_eq!((status, &body["inserted"]), (200, &json!(1)), "{body}");

    // Queries by fingerprint (hex, 0x, a number; decimal text in a list of its own), by
    // text and by document.
    let (status, body) = server.post(
        "/v1/query",
        r#"{"fingerprints": ["0123456789abcdef", "0x123456789abcdee", "0X0123456789ABCDEF", 81985529216486894], "distance": 1}"#,
    );
    assert_eq!(status, 200, "{body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let ids: Vec<&str> = results[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(
        results[0][1],
        json!({"id": "b", "fingerprint": "0123456789abcdee", "distance": 1})
    );
    assert_eq!(results[1], results[3]);
    let (status, body) = server.post("/v1/query", &json!({ "texts": [text] }).to_string());
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0][0]["id"], "t");
    assert_eq!(body["results"][0][0]["distance"], 0);
    let (status, body) = server.post(
        "/v1/query",
        &json!({ "documents": [{ "id": "q", "text": text }, { "id": "r", "text": "zz qq" }] })
            .to_string(),
    );
    assert_eq!(
        (status, &body["results"][0][0]["id"]),
        (200, &json!("t")),
        "{body}"
    );
    // Each result is that of the document the request names: its id is echoed.
    assert_eq!(body["ids"], json!(["q", "r"]), "{body}");
    assert_eq!(body["results"].as_array().unwrap().len(), 2);
    assert!(server
        .post("/v1/query", &json!({ "texts": [text] }).to_string())
        .1["ids"]
        .is_null());
    let (status, body) = server.get("/v1/query?fingerprint=0123456789abcdef&distance=0");
    assert_eq!(status, 200);
    assert_eq!(
        body["matches"],
        json!([{"id": "a", "fingerprint": "0123456789abcdef", "distance": 0}])
    );

    // Documents, delete, stats, metrics.
    assert_eq!(
        server.get("/v1/documents/a"),
        (
            200,
            json!({ "id": "a", "fingerprint": "0123456789abcdef", "batch": 1 })
        )
    );
    assert_eq!(server.get("/v1/documents/nobody").0, 404);
    let (status, body) = server.post("/v1/delete?dry_run=true", r#"{"ids": ["a"]}"#);
    assert_eq!(
        (status, &body["deleted"], &body["dry_run"]),
        (200, &json!(1), &json!(true))
    );
    assert_eq!(server.get("/v1/documents/a").0, 200);
    let (status, body) = server.post("/v1/delete", r#"{"ids": ["a", "zz"]}"#);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (&body["deleted"], &body["not_found"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(server.get("/v1/documents/a").0, 404);
    assert!(server.query(&[0x0123_4567_89ab_cdef], 0)[0].is_empty());
    let (status, stats) = server.get("/v1/stats");
    assert_eq!(status, 200);
    assert_eq!(stats["documents"], 2);
    assert_eq!(stats["batches"], 3);
    assert!(stats["server"]["pinned_tables"].as_u64().unwrap() > 0);
    let (status, metrics) = server.get("/metrics");
    assert_eq!(status, 200);
    let metrics = metrics.as_str().unwrap().to_string();
    for line in [
        "simhashdb_queries_total 10",
        "simhashdb_documents 2",
        "simhashdb_ready 1",
        "simhashdb_http_requests_total{endpoint=\"/v1/query\",status=\"200\"} 6",
        "simhashdb_http_request_duration_seconds_count{endpoint=\"/v1/insert\"} 2",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "no {line:?} in\n{metrics}"
        );
    }
    assert!(metrics.contains("simhashdb_probes_total{where=\"memory\"}"));
    assert!(server.terminate().success());
}

#[test]
fn a_cli_insert_is_seen_within_a_second_and_queries_see_one_state_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &[]);
    let mut rng = Rng(7);
    let old: Vec<(String, u64)> = (0..2000).map(|i| (format!("o{i}"), rng.next())).collect();
    for part in old.chunks(500) {
        cli_insert(&store, part, &["--no-compact"]);
    }
    let server = Server::start(&store, &[]);

    // Queries near both old and new documents, asked again and again while a CLI insert
    // and a compaction commit.
    let new: Vec<(String, u64)> = (0..2000).map(|i| (format!("n{i}"), rng.next())).collect();
    let old_model: BTreeMap<String, u64> = old.iter().cloned().collect();
    let mut new_model = old_model.clone();
    new_model.extend(new.iter().cloned());
    let queries: Vec<u64> = old
        .iter()
        .chain(&new)
        .step_by(40)
        .map(|(_, fp)| rng.near(*fp, 2))
        .collect();
    let before: Vec<_> = queries
        .iter()
        .map(|&q| brute_force(&old_model, q, 3))
        .collect();
    let after: Vec<_> = queries
        .iter()
        .map(|&q| brute_force(&new_model, q, 3))
        .collect();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let (server, queries) = (&server, &queries);
    let answers = std::thread::scope(|scope| {
        let asker = scope.spawn(move || {
            let mut seen = Vec::new();
            while done_rx.try_recv().is_err() {
                seen.push(server.query(queries, 3));
            }
            seen.push(server.query(queries, 3));
            seen
        });
        // The insert, then how soon the server sees it.
        cli_insert(&store, &new, &["--no-compact"]);
        let committed = Instant::now();
        let probe = new[0].1;
        while server.query(&[probe], 0)[0].is_empty() {
            assert!(
                committed.elapsed() < Duration::from_secs(1),
                "a CLI insert was not seen within a second"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = simhashdb(&["compact", path_str(&store)], "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        std::thread::sleep(Duration::from_millis(600));
        done_tx.send(()).unwrap();
        asker.join().unwrap()
    });
    assert!(answers.len() >= 3, "the queries ran during the writes");
    for answer in &answers {
        assert!(
            *answer == before || *answer == after,
            "a query saw neither the old state nor the new one"
        );
    }
    assert_eq!(answers.last().unwrap(), &after);
    assert_eq!(
        server.get("/v1/stats").1["runs"],
        1,
        "the compaction was seen"
    );
}

#[test]
fn writes_through_the_server_compact_in_the_background_by_the_store_policy() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &["--max-runs", "2"]);
    let server = Server::start(&store, &[]);
    let mut model = BTreeMap::new();
    let mut rng = Rng(11);
    let mut started = false;
    for batch in 0..4 {
        let docs: String = (0..300)
            .map(|i| {
                let (id, fp) = (format!("b{batch}-{i}"), rng.next());
                model.insert(id.clone(), fp);
                format!("{id}\t{fp:016x}\n")
            })
            .collect();
        let (status, body) = server.post("/v1/insert", &docs);
        assert_eq!(status, 200, "{body}");
        // The next write waits for the merge (this server's writes run one at a time).
        started |= body["compaction_started"] == json!(true);
    }
    assert!(started, "the policy (at most 2 runs) asked for a merge");
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.get("/v1/stats").1["server"]["compacting"] == json!(true) {
        assert!(
            Instant::now() < deadline,
            "the background compaction did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (status, stats) = server.get("/v1/stats");
    assert_eq!(status, 200, "{stats}");
    assert!(
        stats["runs"].as_u64().is_some_and(|runs| runs <= 2),
        "{stats}"
    );
    let queries: Vec<u64> = model.values().step_by(13).map(|&f| f ^ 0b101).collect();
    for (q, got) in queries.iter().zip(server.query(&queries, 3)) {
        assert_eq!(got, brute_force(&model, *q, 3));
    }
}

#[test]
fn bad_requests_get_json_errors_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &[]);
    cli_insert(&store, &[("a".into(), 0x0123_4567_89ab_cdef)], &[]);
    let key_file = dir.path().join("key");
    std::fs::write(&key_file, "sesame\n").unwrap();
    let server = Server::start(
        &store,
        &[
            "--api-key-file",
            path_str(&key_file),
            "--max-body-mib",
            "1",
            "--max-queries",
            "10",
            "--request-timeout",
            "1",
        ],
    );
    let key = [("Authorization", "Bearer sesame")];
    let expect = |(status, body): (u16, Value), want: u16, says: &str| {
        assert_eq!(status, want, "{body}");
        let error = body["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error in {body}"));
        assert!(error.contains(says), "{error:?} does not say {says:?}");
    };

    // The key: probes need none, everything else does.
    assert_eq!(server.get("/livez").0, 200);
    expect(
        server.post("/v1/query", r#"{"fingerprints": []}"#),
        401,
        "missing API key",
    );
    expect(
        server.post_with(
            "/v1/query",
            r#"{"fingerprints": []}"#,
            &[("Authorization", "Bearer nope")],
        ),
        401,
        "wrong API key",
    );
    expect(server.get("/metrics"), 401, "API key");
    let post = |path: &str, body: &str| server.post_with(path, body, &key);
    assert_eq!(post("/v1/query", r#"{"fingerprints": []}"#).0, 200);
    // The scheme's name is case-insensitive (RFC 9110).
    for scheme in ["bearer", "BEARER", "BeArEr"] {
        let header = [("Authorization", format!("{scheme} sesame"))];
        let header = [(header[0].0, header[0].1.as_str())];
        let (status, body) = server.post_with("/v1/query", r#"{"fingerprints": []}"#, &header);
        assert_eq!(status, 200, "{scheme}: {body}");
    }
    assert_eq!(
        server
            .post_with(
                "/v1/query",
                r#"{"fingerprints": []}"#,
                &[("X-Api-Key", "sesame")]
            )
            .0,
        200
    );

    // Malformed and wrong requests.
    for (body, says) in [
        ("{\"fingerprints\": [\"0123", "invalid JSON"),
        (r#"{"fingerprints": "0123456789abcdef"}"#, "invalid type"),
        (r#"{"fingerprints": [true]}"#, "fingerprints: value 1"),
        (
            r#"{"fingerprints": ["0123", "zz"]}"#,
            "fingerprints: value 2",
        ),
        (r#"{"fingerprints": [1.5]}"#, "fingerprints: value 1"),
        (
            r#"{"fingerprints": [-9223372036854775809]}"#,
            "fingerprints: value 1",
        ),
        (
            r#"{"fingerprints": ["1"], "fingerprint_format": "octal"}"#,
            "unknown fingerprint format",
        ),
        (r#"{"fingerprints": ["1"], "distance": 4}"#, "distance 4"),
        (
            r#"{"fingerprints": ["1"], "distance": -1}"#,
            "-1 is negative",
        ),
        (r#"{"fingerprints": ["1"], "k": 2}"#, "unknown field `k`"),
        (r#"{"distance": 2}"#, "exactly one of"),
        (r#"{"texts": [""]}"#, "texts[0]"),
        (r#"[["0123456789abcdef"], null, null, 2]"#, "a JSON object"),
        (
            r#"{"documents": [{"id": "", "text": "two words"}]}"#,
            "documents[0].id: the id is empty",
        ),
        (
            r#"{"documents": [{"id": "a", "text": "two words"}, {"id": "b\tc", "text": "x y"}]}"#,
            "documents[1].id",
        ),
    ] {
        expect(post("/v1/query", body), 400, says);
    }
    // An int64 is the same 64 bits.
    let (status, int64) = post("/v1/query", r#"{"fingerprints": [-1], "distance": 0}"#);
    assert_eq!(
        (status, int64["fingerprints"].clone()),
        (200, json!(["ffffffffffffffff"]))
    );
    let many = json!({ "fingerprints": vec!["1"; 11] }).to_string();
    expect(post("/v1/query", &many), 413, "the limit is 10");
    // Bodies over --max-body-mib: declared (refused before it is sent) or chunked (refused
    // at the limit). The server answers and closes; the rest of the body is not read.
    let raw = |head: &str, body: &[u8]| {
        let mut stream = TcpStream::connect(server.host()).unwrap();
        write!(
            stream,
            "{head}Host: x\r\nAuthorization: Bearer sesame\r\n\r\n"
        )
        .unwrap();
        let _ = stream.write_all(body);
        let mut response = String::new();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let _ = stream.read_to_string(&mut response);
        response
    };
    let response = raw(
        "POST /v1/query HTTP/1.1\r\nContent-Length: 3000000\r\n",
        b"",
    );
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(
        response.contains("over the limit of 1048576 bytes"),
        "{response}"
    );
    let chunk = format!("{:x}\r\n{}\r\n", 1 << 16, "1".repeat(1 << 16));
    let response = raw(
        "POST /v1/query HTTP/1.1\r\nTransfer-Encoding: chunked\r\n",
        chunk.repeat(24).as_bytes(),
    );
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    let get = |path: &str| server.get_with(path, &key);
    expect(get("/v1/query?fingerprint=xyz"), 400, "fingerprint");
    expect(get("/v1/query?fingerprint=1&distance=9"), 400, "distance 9");
    expect(get("/v1/query?fingerprint=1&bogus=1"), 400, "bogus");
    expect(get("/v1/query"), 400, "fingerprint");
    expect(get("/v1/nothing"), 404, "no such endpoint");
    expect(post("/v1/stats", ""), 405, "does not take POST");
    expect(
        post("/v1/insert", "a\tnot-a-fingerprint\n"),
        400,
        "request body:1",
    );
    expect(
        post("/v1/insert?label=a%09b", "b\t0000000000000001\n"),
        400,
        "label",
    );
    // A body holds documents: tsv, jsonl or parquet, as the error says.
    for (format, says) in [
        (
            "csv",
            "unknown format \"csv\": use tsv, jsonl, text, parquet or fingerprints",
        ),
        ("text", "not one text (\"text\"): use tsv, jsonl or parquet"),
        ("fingerprints", "not a list of queries (\"fingerprints\")"),
    ] {
        let path = format!("/v1/insert?format={format}");
        expect(post(&path, "b\t0000000000000001\n"), 400, says);
    }
    // Past max_skipped nothing is stored, and the refusal lists every record skipped.
    for path in ["/v1/insert", "/v1/dedup", "/v1/dedup?insert=true"] {
        let sep = if path.contains('?') { '&' } else { '?' };
        let body = "a\tzz\nb\tyy\nc\t0000000000000002\n";
        let (status, answer) = post(&format!("{path}{sep}max_skipped=1"), body);
        assert_eq!(status, 400, "{answer}");
        assert!(answer["error"]
            .as_str()
            .unwrap()
            .contains("the rejects list every one"));
        let lines: Vec<&Value> = answer["rejects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["line"])
            .collect();
        assert_eq!(lines, [&json!(1), &json!(2)], "{path}: {answer}");
    }
    // An empty body stores nothing, and says so.
    for path in ["/v1/insert", "/v1/dedup?insert=true"] {
        let (status, body) = post(path, "");
        assert_eq!(status, 200, "{body}");
        let warning = body["warnings"][0].as_str().unwrap_or_default();
        assert!(
            warning.contains("request body: holds no documents"),
            "{body}"
        );
    }
    // A label that is not UTF-8 once decoded would be stored changed: refused.
    expect(
        post("/v1/insert?label=%FF", "b\t0000000000000001\n"),
        400,
        "not UTF-8",
    );
    // A body that is not what its Content-Encoding says.
    for encoding in ["gzip", "zstd"] {
        let header = [key[0], ("Content-Encoding", encoding)];
        expect(
            server.post_with("/v1/insert", "b\t0000000000000001\n", &header),
            400,
            &format!("the body is not {encoding}"),
        );
        // An empty one is no documents, whatever its encoding.
        let (status, body) = server.post_with("/v1/insert", "", &header);
        assert_eq!(status, 200, "{body}");
        assert!(body["warnings"][0]
            .as_str()
            .unwrap()
            .contains("holds no documents"));
    }
    expect(post("/v1/delete", r#"{"ids": "a"}"#), 400, "invalid type");
    expect(
        post("/v1/delete", r#"{"ids": [""]}"#),
        400,
        "ids[0]: the id is empty (nothing was changed)",
    );

    // A slow client: the body does not arrive within --request-timeout.
    let mut slow = TcpStream::connect(server.host()).unwrap();
    write!(
        slow,
        "POST /v1/query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sesame\r\nContent-Length: 100\r\n\r\n{{"
    )
    .unwrap();
    let mut response = String::new();
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let _ = slow.read_to_string(&mut response);
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(response.contains("did not arrive within 1 s"), "{response}");
    // A client that never finishes its headers is disconnected.
    let mut silent = TcpStream::connect(server.host()).unwrap();
    write!(silent, "GET /livez HTTP/1.1\r\n").unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut rest = Vec::new();
    assert!(
        silent.read_to_end(&mut rest).is_ok(),
        "the connection is closed, not left hanging"
    );

    // Another process holds the writer lock: 409 with its pid.
    {
        let _writer = simhashdb::Store::open(&store).unwrap();
        let (status, body) = post("/v1/insert", "b\t0000000000000001\n");
        assert_eq!(status, 409, "{body}");
        assert_eq!(body["pid"], json!(std::process::id()), "a number");
    }

    // Nothing changed, and the server still answers.
    let (status, stats) = get("/v1/stats");
    assert_eq!(
        (status, &stats["documents"], &stats["batches"]),
        (200, &json!(1), &json!(1))
    );
    assert_eq!(server.get("/livez").0, 200);
    drop(server);

    // Read-only: writes are forbidden.
    let server = Server::start(&store, &["--read-only"]);
    let (status, body) = server.post("/v1/insert", "b\t0000000000000001\n");
    assert_eq!(status, 403, "{body}");
    assert_eq!(server.post("/v1/delete", r#"{"ids": ["a"]}"#).0, 403);
    assert_eq!(server.query(&[0x0123_4567_89ab_cdef], 0)[0].len(), 1);
}

#[test]
fn listen_takes_a_host_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &[]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_simhashdb"))
        .args(["serve", path_str(&store), "--listen", "localhost:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let address = stderr.lines().map_while(Result::ok).find_map(|line| {
        let at = line.find("http://")?;
        Some(line[at + 7..].split_whitespace().next()?.to_string())
    });
    let _ = child.kill();
    let _ = child.wait();
    let address = address.expect("the server printed its address");
    assert!(
        address.starts_with("127.0.0.1:") || address.starts_with("[::1]:"),
        "{address}"
    );
}

#[test]
fn bad_command_lines_fail_before_serving() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let out = simhashdb(&["serve", path_str(&store), "--listen", "127.0.0.1:0"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot open the store"),
        "{}",
        text(&out.stderr)
    );
    init(&store, &[]);
    let out = simhashdb(&["serve", path_str(&store), "--listen", "localhost"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--listen"));
    let missing = dir.path().join("no-key");
    let out = simhashdb(
        &[
            "serve",
            path_str(&store),
            "--api-key-file",
            path_str(&missing),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--api-key-file"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn sigterm_lets_a_request_in_flight_finish_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &[]);
    cli_insert(&store, &[("a".into(), 42)], &[]);
    let server = Server::start(&store, &[]);
    // Half a request, then SIGTERM, then the rest: it is answered.
    let body = r#"{"fingerprints": ["42"], "distance": 0}"#;
    let mut stream = TcpStream::connect(server.host()).unwrap();
    write!(
        stream,
        "POST /v1/query HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{}",
        body.len(),
        &body[..10]
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let pid = server.child.id() as libc::pid_t;
    // SAFETY: kill only sends a signal to the child this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    std::thread::sleep(Duration::from_millis(200));
    stream.write_all(&body.as_bytes()[10..]).unwrap();
    let mut response = String::new();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains(r#""id":"a""#), "{response}");
    let host = server.host().to_string();
    assert!(server.terminate().success());
    // New connections are refused once it stopped.
    assert!(TcpStream::connect(host).is_err());
}

#[test]
fn batches_expire_and_compact_answer_as_the_cli_does_behind_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &["--shards", "4"]);
    // Skewed: 300 copies of one fingerprint in day1, beside a second batch.
    let day1: Vec<(String, u64)> = (0..300).map(|i| (format!("copy-{i}"), 0xabcd)).collect();
    cli_insert(&store, &day1, &["--label", "day1", "--no-compact"]);
    cli_insert(
        &store,
        &[("other".into(), 0xffff_0000_0000_0000)],
        &["--label", "day2", "--no-compact"],
    );
    let key_file = dir.path().join("key");
    std::fs::write(&key_file, "sesame\n").unwrap();
    let server = Server::start(&store, &["--api-key-file", path_str(&key_file)]);
    let key = [("Authorization", "Bearer sesame")];
    let get = |path: &str| server.get_with(path, &key);
    let post = |path: &str, body: &str| server.post_with(path, body, &key);
    let cli_json = |args: &[&str]| -> Value {
        let out = simhashdb(args, "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let s = path_str(&store);
    let hits = |fingerprint: u64| {
        let body = json!({ "fingerprints": [fingerprint], "distance": 0 }).to_string();
        let (status, answer) = post("/v1/query", &body);
        assert_eq!(status, 200, "{answer}");
        answer["results"][0].as_array().unwrap().len()
    };

    // Behind the key, every one of them.
    for (status, _) in [
        server.get("/v1/batches"),
        server.post("/v1/expire", r#"{"batch": "day1"}"#),
        server.post("/v1/compact", ""),
    ] {
        assert_eq!(status, 401);
    }
    // batches: the CLI's lines, as one list.
    let (status, batches) = get("/v1/batches");
    assert_eq!(status, 200, "{batches}");
    let listed = batches["batches"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        (listed[0]["label"].clone(), listed[0]["inserted"].clone()),
        ("day1".into(), 300.into())
    );

    // Dry runs answer what the CLI's dry runs print and change nothing.
    let (status, preview) = post("/v1/expire?dry_run=true", r#"{"batch": "day1"}"#);
    assert_eq!(status, 200, "{preview}");
    assert_eq!(
        preview,
        cli_json(&["expire", s, "--batch", "day1", "--dry-run", "--json"])
    );
    assert_eq!(preview["deleted"], 300);
    let (status, mut plan) = post("/v1/compact?dry_run=true", "");
    assert_eq!(status, 200, "{plan}");
    // The machine's free disk moves between the two calls: it is the same field, not value.
    let mut cli_plan = cli_json(&["compact", s, "--dry-run", "--json"]);
    for plan in [&mut plan, &mut cli_plan] {
        assert!(plan["bytes_free"].is_u64(), "{plan}");
        plan["bytes_free"] = 0.into();
    }
    assert_eq!(plan, cli_plan);
    assert_eq!(hits(0xabcd), 300, "the dry runs changed nothing");

    // Bad requests.
    for (path, body, says) in [
        ("/v1/expire", "{}", "exactly one of"),
        (
            "/v1/expire",
            r#"{"batch": "a", "before": "1d"}"#,
            "exactly one of",
        ),
        ("/v1/expire", r#"{"before": "yesterday"}"#, "before:"),
        (
            "/v1/expire",
            r#"{"before": "2999-01-01", "batch": null}"#,
            "in the future",
        ),
        ("/v1/expire", r#"{"label": "day1"}"#, "unknown field"),
        (
            "/v1/expire?if_due=true",
            r#"{"batch": "day1"}"#,
            "only /v1/compact",
        ),
        ("/v1/compact?dry_run=maybe", "", "dry_run"),
        ("/v1/compact", r#"{"if_due": true}"#, "takes no body"),
        ("/v1/compact?dry_run=true", "[]", "takes no body"),
    ] {
        let (status, body) = post(path, body);
        assert_eq!(status, 400, "{path}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(says),
            "{path}: {body}"
        );
    }

    // A label no batch has: 404 with the CLI's message (the library's kind decides both).
    let (status, body) = post("/v1/expire", r#"{"batch": "nope"}"#);
    assert_eq!(status, 404, "{body}");
    let cli = simhashdb(&["expire", s, "--batch", "nope"], "");
    assert_eq!(cli.status.code(), Some(1));
    let (said, cli_said) = (body["error"].as_str().unwrap(), text(&cli.stderr));
    let library_said = r#"no insert batch has the label "nope""#;
    assert!(
        said.contains(library_said) && cli_said.contains(library_said),
        "{said} / {cli_said}"
    );

    // The writes themselves.
    let (status, expired) = post("/v1/expire", r#"{"batch": "day1"}"#);
    assert_eq!(status, 200, "{expired}");
    assert_eq!(
        (expired["deleted"].clone(), expired["dry_run"].clone()),
        (300.into(), false.into())
    );
    assert_eq!(hits(0xabcd), 0);
    // An empty object is no body.
    let (status, due) = post("/v1/compact?if_due=true", " { } ");
    assert_eq!(status, 200, "{due}");
    assert_eq!(
        due["merged_runs"], 0,
        "two runs are not due under the default policy"
    );
    let (status, compacted) = post("/v1/compact", "");
    assert_eq!(status, 200, "{compacted}");
    assert_eq!(
        (
            compacted["runs_before"].clone(),
            compacted["runs_after"].clone()
        ),
        (3.into(), 1.into())
    );
    assert!(compacted["dropped_documents"].as_u64().unwrap() >= 300);
    assert_eq!(hits(0xffff_0000_0000_0000), 1);
    assert!(server.terminate().success());
    // The CLI sees what the server did.
    assert_eq!(cli_json(&["stats", s, "--json"])["documents"], 1);
}

#[test]
fn dedup_answers_as_the_model_and_the_cli_do_and_inserts_in_one_write() {
    use crate::dedup::{
        after_insert, batches_of, duplicate_lines, greedy_model, live, skewed, without_batches,
    };
    let dir = tempfile::tempdir().unwrap();
    let (store, stored, input) = skewed(dir.path());
    let expected = greedy_model(&stored, &batches_of(&store), &input, 3);
    let body: String = input
        .iter()
        .map(|(id, fp)| format!("{id}\t{fp:016x}\n"))
        .collect();
    let server = Server::start(&store, &[]);
    let (status, answer) = server.post("/v1/dedup", &body);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"], json!(expected));
    assert_eq!(answer["inserted"], json!(0));
    assert_eq!(answer["batch"], Value::Null);
    // The CLI reads beside the running server and says the same.
    let tsv = dir.path().join("in.tsv");
    std::fs::write(&tsv, &body).unwrap();
    let out = simhashdb(
        &[
            "dedup",
            path_str(&store),
            path_str(&tsv),
            "--duplicates",
            "-",
            "--output",
            path_str(&dir.path().join("kept")),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        duplicate_lines(answer["results"].as_array().unwrap())
    );

    // Bad requests change nothing.
    for (path, says) in [
        ("/v1/dedup?distance=4", "distance"),
        ("/v1/dedup?label=x", "insert=true"),
        ("/v1/dedup?insert=maybe", "insert"),
        ("/v1/dedup?nonsense=1", "nonsense"),
    ] {
        let (status, answer) = server.post(path, &body);
        assert_eq!(status, 400, "{path}: {answer}");
        assert!(answer.to_string().contains(says), "{path}: {answer}");
    }
    // An error answered before the body was read ends the connection, so a client never
    // sends its next request on a connection that still holds an unread body.
    for _ in 0..20 {
        let response = server
            .agent
            .post(format!("{}/v1/dedup?distance=4", server.base))
            .send(&body)
            .expect("the server answers");
        assert_eq!(response.status().as_u16(), 400);
        assert_eq!(
            response.headers().get("connection").map(|v| v.as_bytes()),
            Some(&b"close"[..])
        );
        let (status, _) = server.get("/v1/stats");
        assert_eq!(status, 200);
    }
    let (status, answer) = server.post("/v1/dedup?insert=true", "a\t0x00ff\nb\tnope\n");
    assert_eq!(status, 400, "{answer}");
    assert!(answer.to_string().contains("request body:2"), "{answer}");
    assert!(
        answer.to_string().contains("nothing was stored"),
        "{answer}"
    );

    let (status, answer) = server.post("/v1/dedup?insert=true&label=day-2", &body);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"], json!(expected));
    let kept = expected.iter().filter(|v| v["kept"] == json!(true)).count();
    assert_eq!(answer["inserted"], json!(kept));
    assert_eq!(answer["batch"], json!(4));
    // The next dedup sees the batch: everything is a duplicate of a stored document.
    let (_, again) = server.post("/v1/dedup", &body);
    assert_eq!(again["duplicates_of_stored"], json!(input.len()));
    drop(server);
    assert_eq!(
        without_batches(live(&store)),
        after_insert(&stored, &input, &expected)
    );

    let server = Server::start(&store, &["--read-only"]);
    let (status, _) = server.post("/v1/dedup?insert=true", &body);
    assert_eq!(status, 403);
    let (status, answer) = server.post("/v1/dedup", &body);
    assert_eq!(status, 200, "{answer}");
}

/// `min_jaccard` on `POST /v1/query` and `POST /v1/dedup` of a store with sketches answers as
/// the CLI beside it does, flags matches it cannot verify, and is a 400 on a store without.
#[test]
fn queries_and_dedup_verify_with_sketches_as_the_cli_does() {
    use crate::sketch::text_of;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &["--sketch"]);
    let mut docs = String::new();
    for i in 0..1500 {
        docs += &format!(
            "{}\n",
            json!({"id": format!("copy-{i:04}"), "text": text_of(0, 0)})
        );
    }
    for (b, e) in [(0, 2), (0, 5), (1, 0), (1, 3), (2, 0)] {
        docs += &format!(
            "{}\n",
            json!({"id": format!("near-{b}-{e}"), "text": text_of(b, e)})
        );
    }
    let out = simhashdb(&["insert", path_str(&store), "--format", "jsonl"], &docs);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let server = Server::start(&store, &[]);
    let texts = [text_of(0, 1), text_of(1, 2)];
    let (status, answer) = server.post(
        "/v1/query",
        &json!({"texts": texts, "min_jaccard": 0.8}).to_string(),
    );
    assert_eq!(status, 200, "{answer}");
    for (q, results) in texts.iter().zip(answer["results"].as_array().unwrap()) {
        let out = simhashdb(
            &[
                "query",
                path_str(&store),
                "--text",
                q,
                "--min-jaccard",
                "0.8",
                "--json",
            ],
            "",
        );
        let cli: Vec<Value> = text(&out.stdout)
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("query");
                v
            })
            .collect();
        assert_eq!(results.as_array().unwrap(), &cli);
        assert!(cli.iter().all(|m| m["jaccard"].as_f64().unwrap() >= 0.8));
    }
    assert!(answer["results"][0].as_array().unwrap().len() >= 1500);
    let fp = answer["results"][0][0]["fingerprint"].clone();
    let (status, answer) = server.post(
        "/v1/query",
        &json!({"fingerprints": [fp], "min_jaccard": 0.8}).to_string(),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(answer["results"][0]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["unverified"] == json!(true) && m.get("jaccard").is_none()));
    // Dedup of a copy, a near version and a new text.
    let day = [
        ("x-copy", text_of(0, 0)),
        ("x-near", text_of(1, 6)),
        ("x-new", text_of(3, 0)),
    ];
    let body: String = day
        .iter()
        .map(|(id, t)| format!("{}\n", json!({"id": id, "text": t})))
        .collect();
    let (status, answer) = server.post("/v1/dedup?min_jaccard=0.8&format=jsonl", &body);
    assert_eq!(status, 200, "{answer}");
    let mut batch = simhashdb::Batch::new();
    let scheme = simhashdb::Snapshot::open(&store)
        .unwrap()
        .text_scheme()
        .unwrap();
    for (id, t) in &day {
        let (fp, sketch) = scheme.document(t).unwrap();
        batch.push_sketched(id, fp, &sketch.unwrap()).unwrap();
    }
    let snapshot = simhashdb::Snapshot::open(&store).unwrap();
    let verdicts = crate::util::dedup_batch(&snapshot, &batch, 3, Some(0.8)).unwrap();
    assert_eq!(answer["results"], serde_json::to_value(&verdicts).unwrap());
    assert_eq!(answer["results"][0]["kept"], json!(false));
    assert!(answer["results"][0]["jaccard"].as_f64().unwrap() >= 0.8);
    assert_eq!(answer["results"][2]["kept"], json!(true));
    drop(server);
    // A store without sketches: 400, saying how to get them.
    let plain = dir.path().join("plain");
    init(&plain, &[]);
    let server = Server::start(&plain, &[]);
    for (path, body) in [
        (
            "/v1/query",
            json!({"texts": ["a b c"], "min_jaccard": 0.8}).to_string(),
        ),
        (
            "/v1/dedup?min_jaccard=0.8",
            "a\t0000000000000001\n".to_string(),
        ),
        (
            "/v1/query",
            json!({"texts": ["a b c"], "min_jaccard": 2.0}).to_string(),
        ),
    ] {
        let (status, answer) = server.post(path, &body);
        assert_eq!(status, 400, "{path}: {answer}");
    }
}

/// Bodies compressed with gzip or zstd are read as the CLI reads such files (by
/// Content-Encoding or by their first bytes), within the body limit once decompressed.
#[test]
fn compressed_bodies_are_read_as_files_are() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &[]);
    let server = Server::start(&store, &["--max-body-mib", "1"]);
    let tsv = "a\t00000000000000ff\nb\t0f00000000000000\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(tsv.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(tsv.as_bytes(), 3).unwrap();
    for (body, headers) in [
        (&gz, vec![("Content-Encoding", "gzip")]),
        (&gz, vec![]),
        (&zst, vec![("Content-Encoding", "zstd")]),
    ] {
        let (status, answer) = server.post_bytes("/v1/insert?format=tsv", body, &headers);
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["lines"], 2, "{answer}");
    }
    let (status, answer) = server.post_bytes("/v1/dedup", &gz, &[("Content-Encoding", "gzip")]);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["duplicates_of_stored"], 2, "{answer}");
    let (status, answer) =
        server.post_bytes("/v1/insert", tsv.as_bytes(), &[("Content-Encoding", "br")]);
    assert_eq!(status, 415, "{answer}");
    // A small body that decompresses past the limit: 413, nothing stored.
    let big: String = (0..100_000).map(|i| format!("d{i}\t{i:016x}\n")).collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(big.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    assert!(gz.len() < 1 << 20 && big.len() > 1 << 20);
    let (status, answer) = server.post_bytes("/v1/insert", &gz, &[]);
    assert_eq!(status, 413, "{answer}");
    let zst_cut = &zst[..zst.len() - 4];
    let (status, answer) = server.post_bytes("/v1/insert", zst_cut, &[]);
    assert_eq!(status, 400, "a cut zstd body: {answer}");
    assert_eq!(server.get("/v1/stats").1["documents"], 2);
}

/// Beyond loopback the server needs a key (or says it goes without one); with a key an
/// unknown path is 401 like every other; a read-only server answers dry runs.
#[test]
fn the_server_guards_its_edges() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    init(&store, &[]);
    let out = simhashdb(&["serve", path_str(&store), "--listen", "0.0.0.0:0"], "");
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--api-key-file") && stderr.contains("--insecure-no-key"),
        "{stderr}"
    );

    let key = dir.path().join("key");
    std::fs::write(&key, "sesame\n").unwrap();
    let server = Server::start(&store, &["--api-key-file", path_str(&key)]);
    for path in ["/v1/nothing", "/admin", "/v1/query/x"] {
        assert_eq!(server.get(path).0, 401, "{path}");
        assert_eq!(
            server.get_with(path, &[("X-Api-Key", "sesame")]).0,
            404,
            "{path}"
        );
    }
    assert_eq!(
        server.post("/livez", "").0,
        401,
        "a wrong method is refused alike"
    );
    drop(server);

    let server = Server::start(&store, &["--read-only"]);
    let (status, answer) = server.post("/v1/compact?dry_run=true", "");
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = server.post("/v1/delete?dry_run=true", r#"{"ids": ["a"]}"#);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(server.post("/v1/compact", "").0, 403);
    assert_eq!(server.post("/v1/insert", "a\t00000000000000ff\n").0, 403);
}
