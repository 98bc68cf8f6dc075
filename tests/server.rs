//! The test harness of the HTTP server, for every test that talks to it: `simhashdb serve`
//! started on an ephemeral loopback port, ready before the first request, killed when dropped
//! (also when a test fails).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::path_str;

/// A running server, killed (if still running) when dropped, so a failing test stops it too.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub agent: ureq::Agent,
}

impl Server {
    /// Starts `simhashdb serve STORE --listen 127.0.0.1:0 EXTRA...` and waits until it is ready.
    pub fn start(store: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_simhashdb"))
            .args(["serve", path_str(store), "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        // The server prints its address; the rest of its log is echoed for failing tests.
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[server] {line}");
                if let Some(at) = line.find("http://") {
                    let addr = line[at..].split_whitespace().next().unwrap().to_string();
                    let _ = tx.send(addr);
                }
            }
        });
        let base = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the server prints its address");
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        let server = Server { child, base, agent };
        let deadline = Instant::now() + Duration::from_secs(60);
        while server.get("/readyz").0 != 200 {
            assert!(Instant::now() < deadline, "the server did not become ready");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        self.get_with(path, &[])
    }

    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> (u16, Value) {
        let mut request = self.agent.get(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        answer(request.call())
    }

    pub fn post(&self, path: &str, body: &str) -> (u16, Value) {
        self.post_with(path, body, &[])
    }

    pub fn post_bytes(&self, path: &str, body: &[u8], headers: &[(&str, &str)]) -> (u16, Value) {
        let mut request = self.agent.post(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        answer(request.send(body))
    }

    pub fn post_with(&self, path: &str, body: &str, headers: &[(&str, &str)]) -> (u16, Value) {
        let mut request = self.agent.post(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        answer(request.send(body))
    }

    pub fn query(&self, fingerprints: &[u64], distance: u32) -> Vec<Vec<(u32, u64, String)>> {
        let hex: Vec<String> = fingerprints.iter().map(|f| format!("{f:016x}")).collect();
        let (status, body) = self.post(
            "/v1/query",
            &json!({ "fingerprints": hex, "distance": distance }).to_string(),
        );
        assert_eq!(status, 200, "{body}");
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|matches| matches.as_array().unwrap().iter().map(tuple).collect())
            .collect()
    }

    /// The status and the body, byte for byte, of `METHOD PATH` with `body`.
    pub fn raw(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let url = format!("{}{path}", self.base);
        let response = match method {
            "GET" => self.agent.get(url).call(),
            "POST" => self.agent.post(url).send(body),
            other => panic!("no {other} requests here"),
        };
        let mut response = response.expect("the server answers");
        let status = response.status().as_u16();
        (status, response.body_mut().read_to_string().unwrap())
    }

    pub fn host(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill only sends a signal to the child this test started.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn answer(response: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (u16, Value) {
    let mut response = response.expect("the server answers");
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap();
    let value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    (status, value)
}

/// A match of the JSON answer as (distance, fingerprint, id).
pub fn tuple(m: &Value) -> (u32, u64, String) {
    (
        m["distance"].as_u64().unwrap() as u32,
        u64::from_str_radix(m["fingerprint"].as_str().unwrap(), 16).unwrap(),
        m["id"].as_str().unwrap().to_string(),
    )
}
