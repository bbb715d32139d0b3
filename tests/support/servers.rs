//! Real servers on 127.0.0.1 for the remote-reading tests, started by the
//! tests themselves:
//!
//! - [`Origin`]: an HTTP/1.1 server of objects held in memory that honours
//!   `Range` (206, `Content-Range`, 416), `If-Match` (412) and `HEAD`, with
//!   an ETag per object version; objects can be replaced or truncated while
//!   a test reads them.
//! - [`Proxy`]: a proxy in front of any HTTP server (the origin, or the S3
//!   server) that counts requests and the bytes of their answers, records
//!   each request's `Range`, and injects faults: an answer of 503 or 429 for
//!   every k-th request, a connection dropped half-way through a body, and
//!   latency per request.
//! - [`Moto`]: moto's S3 server (`moto_server`, from `pip install
//!   'moto[server]'`, which `./test.sh` installs), started once per test
//!   binary on a free port. If it cannot start, the test fails with the
//!   reason: it is never skipped.
//!
//! Every connection is answered with `Connection: close`, so that each
//! request is counted and faulted on its own.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// A request as read off the wire.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one request (head and a `Content-Length` body); `None` at EOF.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

/// A listener served on threads until dropped.
struct Serving {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Serving {
    fn start(handle: impl Fn(TcpStream) + Send + Sync + 'static) -> Serving {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let stop = Arc::new(AtomicBool::new(false));
        let handle = Arc::new(handle);
        let stopping = Arc::clone(&stop);
        thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let handle = Arc::clone(&handle);
                thread::spawn(move || handle(stream));
            }
        });
        Serving { addr, stop }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

struct Object {
    bytes: Arc<Vec<u8>>,
    etag: String,
}

#[derive(Default)]
struct OriginState {
    objects: Mutex<HashMap<String, Object>>,
    versions: AtomicU64,
    requests: AtomicU64,
}

/// An HTTP server of objects in memory that honours `Range` (see the
/// module).
pub struct Origin {
    serving: Serving,
    state: Arc<OriginState>,
}

impl Origin {
    pub fn start() -> Origin {
        let state = Arc::new(OriginState::default());
        let serving_state = Arc::clone(&state);
        let serving = Serving::start(move |stream| serve_origin(stream, &serving_state));
        Origin { serving, state }
    }

    pub fn addr(&self) -> SocketAddr {
        self.serving.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.serving.addr)
    }

    /// Serves `bytes` at `/path` (a new version: a new ETag).
    pub fn put(&self, path: &str, bytes: Vec<u8>) {
        let v = self.state.versions.fetch_add(1, Ordering::SeqCst);
        let object = Object {
            bytes: Arc::new(bytes),
            etag: format!("\"v{v}-{}\"", path.len()),
        };
        let path = format!("/{}", path.trim_start_matches('/'));
        self.state.objects.lock().unwrap().insert(path, object);
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::SeqCst)
    }
}

fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
}

/// `bytes=a-b`, `bytes=a-`, `bytes=-n` over an object of `len` bytes:
/// `Ok(range)`, or `Err(())` when not satisfiable.
fn parse_range(value: &str, len: u64) -> Result<std::ops::Range<u64>, ()> {
    let spec = value.strip_prefix("bytes=").ok_or(())?;
    let (a, b) = spec.split_once('-').ok_or(())?;
    let (start, end) = if a.is_empty() {
        let n: u64 = b.parse().map_err(|_| ())?;
        (len.saturating_sub(n), len)
    } else {
        let start: u64 = a.parse().map_err(|_| ())?;
        let end = if b.is_empty() {
            len
        } else {
            b.parse::<u64>().map_err(|_| ())?.saturating_add(1).min(len)
        };
        (start, end)
    };
    if start >= len || start >= end {
        return Err(());
    }
    Ok(start..end)
}

fn serve_origin(stream: TcpStream, state: &OriginState) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut stream = stream;
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    state.requests.fetch_add(1, Ordering::SeqCst);
    let path = request.target.split('?').next().unwrap_or("").to_string();
    let found = state
        .objects
        .lock()
        .unwrap()
        .get(&path)
        .map(|o| (Arc::clone(&o.bytes), o.etag.clone()));
    let Some((bytes, etag)) = found else {
        respond(
            &mut stream,
            "404 Not Found",
            &[("Content-Length", "0".into())],
            b"",
        );
        return;
    };
    let common = |len: u64| {
        vec![
            ("ETag", etag.clone()),
            ("Last-Modified", "Thu, 26 Nov 2026 12:00:00 GMT".to_string()),
            ("Accept-Ranges", "bytes".to_string()),
            ("Content-Length", len.to_string()),
        ]
    };
    if let Some(want) = request.header("if-match") {
        if want != etag && want != "*" {
            respond(
                &mut stream,
                "412 Precondition Failed",
                &[("Content-Length", "0".into())],
                b"",
            );
            return;
        }
    }
    let len = bytes.len() as u64;
    match (request.method.as_str(), request.header("range")) {
        ("HEAD", _) => respond(&mut stream, "200 OK", &common(len), b""),
        ("GET", None) => respond(&mut stream, "200 OK", &common(len), &bytes),
        ("GET", Some(range)) => match parse_range(range, len) {
            Ok(r) => {
                let mut headers = common(r.end - r.start);
                headers.push((
                    "Content-Range",
                    format!("bytes {}-{}/{len}", r.start, r.end - 1),
                ));
                respond(
                    &mut stream,
                    "206 Partial Content",
                    &headers,
                    &bytes[r.start as usize..r.end as usize],
                );
            }
            Err(()) => respond(
                &mut stream,
                "416 Range Not Satisfiable",
                &[
                    ("Content-Range", format!("bytes */{len}")),
                    ("Content-Length", "0".into()),
                ],
                b"",
            ),
        },
        _ => respond(
            &mut stream,
            "405 Method Not Allowed",
            &[("Content-Length", "0".into())],
            b"",
        ),
    }
}

/// Faults a [`Proxy`] injects, by request number (1, 2, …).
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Answer every `k`-th request with [`status`](Self::status) (0: never).
    pub fail_every: u64,
    /// The status of failed requests (503 when 0).
    pub status: u16,
    /// Drop the connection half-way through the body of every `k`-th
    /// request that is forwarded (0: never).
    pub drop_every: u64,
    /// Wait this long before forwarding each request.
    pub latency: Duration,
}

#[derive(Default)]
struct ProxyState {
    requests: AtomicU64,
    forwarded: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    bytes: AtomicU64,
    log: Mutex<Vec<String>>,
    faults: Mutex<Faults>,
}

/// A counting, fault-injecting proxy (see the module).
pub struct Proxy {
    serving: Serving,
    state: Arc<ProxyState>,
}

impl Proxy {
    pub fn start(upstream: SocketAddr) -> Proxy {
        Proxy::with_faults(upstream, Faults::default())
    }

    pub fn with_faults(upstream: SocketAddr, faults: Faults) -> Proxy {
        let state = Arc::new(ProxyState {
            faults: Mutex::new(faults),
            ..Default::default()
        });
        let serving_state = Arc::clone(&state);
        let serving = Serving::start(move |stream| serve_proxy(stream, upstream, &serving_state));
        Proxy { serving, state }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.serving.addr)
    }

    pub fn set_faults(&self, faults: Faults) {
        *self.state.faults.lock().unwrap() = faults;
    }

    /// Requests received (failed ones included).
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::SeqCst)
    }

    /// Requests answered with an injected status.
    pub fn failed(&self) -> u64 {
        self.state.failed.load(Ordering::SeqCst)
    }

    /// Answers cut half-way.
    pub fn dropped(&self) -> u64 {
        self.state.dropped.load(Ordering::SeqCst)
    }

    /// Bytes of the answers' bodies passed on (headers not counted).
    pub fn bytes(&self) -> u64 {
        self.state.bytes.load(Ordering::SeqCst)
    }

    /// Each request as `METHOD TARGET [RANGE]`, in arrival order.
    pub fn log(&self) -> Vec<String> {
        self.state.log.lock().unwrap().clone()
    }

    /// Forgets the counts and the log.
    pub fn reset(&self) {
        for c in [
            &self.state.requests,
            &self.state.forwarded,
            &self.state.failed,
            &self.state.dropped,
            &self.state.bytes,
        ] {
            c.store(0, Ordering::SeqCst);
        }
        self.state.log.lock().unwrap().clear();
    }
}

fn serve_proxy(stream: TcpStream, upstream: SocketAddr, state: &ProxyState) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut client = stream;
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    let n = state.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let range = request.header("range").unwrap_or("").to_string();
    state.log.lock().unwrap().push(
        format!("{} {} {range}", request.method, request.target)
            .trim_end()
            .to_string(),
    );
    let faults = state.faults.lock().unwrap().clone();
    thread::sleep(faults.latency);
    if faults.fail_every > 0 && n.is_multiple_of(faults.fail_every) {
        state.failed.fetch_add(1, Ordering::SeqCst);
        let status = match faults.status {
            0 | 503 => "503 Service Unavailable",
            429 => "429 Too Many Requests",
            500 => "500 Internal Server Error",
            501 => "501 Not Implemented",
            403 => "403 Forbidden",
            other => panic!("no reason phrase for {other}"),
        };
        respond(&mut client, status, &[("Content-Length", "0".into())], b"");
        return;
    }
    let Ok(mut up) = TcpStream::connect(upstream) else {
        respond(
            &mut client,
            "502 Bad Gateway",
            &[("Content-Length", "0".into())],
            b"",
        );
        return;
    };
    let mut head = format!("{} {} HTTP/1.1\r\n", request.method, request.target);
    for (k, v) in &request.headers {
        if !k.eq_ignore_ascii_case("connection") {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    head.push_str("Connection: close\r\n\r\n");
    if up.write_all(head.as_bytes()).is_err() || up.write_all(&request.body).is_err() {
        return;
    }
    let forwarded = state.forwarded.fetch_add(1, Ordering::SeqCst) + 1;
    // The answer: its head as is (plus Connection: close), then its body.
    let mut answer = Vec::new();
    if up.read_to_end(&mut answer).is_err() {
        return;
    }
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |p| p + 4);
    let (head, body) = answer.split_at(split);
    let cut =
        faults.drop_every > 0 && forwarded.is_multiple_of(faults.drop_every) && body.len() > 1;
    // Counted before the client can have them: a test that reads the counts
    // (or resets them) once its read has returned must find this answer's
    // bytes already there. Counted after the write, the last answer of one
    // phase now and then landed in the next (one extra 64 KiB read in a
    // network test's open, once in a full run).
    let sent = if cut { body.len() / 2 } else { body.len() };
    state.bytes.fetch_add(sent as u64, Ordering::SeqCst);
    let _ = client.write_all(head);
    let _ = client.write_all(&body[..sent]);
    let _ = client.flush();
    if cut {
        state.dropped.fetch_add(1, Ordering::SeqCst);
        let _ = client.shutdown(Shutdown::Both);
    }
}

/// A server that accepts each connection and reads its request, then
/// answers nothing: with [`Stall::Silent`] it never writes a byte, with
/// [`Stall::Drip`] it writes a good answer (206, with the range asked for
/// of an object of zeros) one byte a second. The connection stays open
/// until the server is dropped.
pub struct Stalling {
    serving: Serving,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

/// How a [`Stalling`] server stalls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stall {
    Silent,
    Drip,
}

impl Stalling {
    pub fn start(stall: Stall) -> Stalling {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, stopped) = (Arc::clone(&requests), Arc::clone(&stop));
        let serving = Serving::start(move |stream| {
            let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
            let mut stream = stream;
            let Some(request) = read_request(&mut reader) else {
                return;
            };
            log.lock()
                .unwrap()
                .push(format!("{} {}", request.method, request.target));
            let mut answer = Vec::new();
            if stall == Stall::Drip {
                let range = request.header("range").unwrap_or("bytes=0-99");
                let r = parse_range(range, 1 << 30).unwrap_or(0..100);
                answer = format!(
                    "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {}-{}/{}\r\nETag: \"e\"\r\n\r\n",
                    r.end - r.start,
                    r.start,
                    r.end - 1,
                    1u64 << 30
                )
                .into_bytes();
                answer.resize(answer.len() + (r.end - r.start) as usize, 0);
            }
            let mut sent = 0;
            while !stopped.load(Ordering::SeqCst) {
                if sent < answer.len() {
                    if stream.write_all(&answer[sent..sent + 1]).is_err() {
                        return;
                    }
                    let _ = stream.flush();
                    sent += 1;
                }
                thread::sleep(Duration::from_secs(1));
            }
        });
        Stalling {
            serving,
            requests,
            stop,
        }
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.serving.addr)
    }

    /// The requests read so far (`METHOD TARGET`).
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Stalling {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// A plain HTTP/1.1 request to `addr` (Connection: close): the status and
/// the body.
pub fn http(addr: SocketAddr, method: &str, target: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    let head = format!(
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("write request");
    stream.write_all(body).expect("write body");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read answer");
    let text = String::from_utf8_lossy(&answer);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |p| p + 4);
    (status, answer[split..].to_vec())
}

/// moto's S3 server, one per test binary (see the module).
pub struct Moto {
    child: Mutex<Child>,
    pub addr: SocketAddr,
}

impl Drop for Moto {
    fn drop(&mut self) {
        if let Ok(mut child) = self.child.lock() {
            let _ = child.kill();
        }
    }
}

/// The program that runs moto's server: `RECORDWIRE_MOTO_SERVER`, else
/// `moto_server` on `PATH`, else next to the venv's python that
/// `./test.sh` puts first on `PATH`.
fn moto_program() -> String {
    if let Ok(p) = std::env::var("RECORDWIRE_MOTO_SERVER") {
        return p;
    }
    "moto_server".to_string()
}

impl Moto {
    /// The server of this test binary, started on first use. Panics with
    /// the reason when it cannot start.
    pub fn get() -> &'static Moto {
        static MOTO: OnceLock<Moto> = OnceLock::new();
        MOTO.get_or_init(Moto::start)
    }

    fn start() -> Moto {
        let port = {
            let probe = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
            probe.local_addr().expect("local address").port()
        };
        let program = moto_program();
        let log = tempfile::NamedTempFile::new().expect("a log file for moto");
        // Statics are never dropped: a shell watches this test process and
        // stops the server when it is gone, so that no server outlives the
        // run.
        let watch = r#"program=$1; port=$2; parent=$3
"$program" -H 127.0.0.1 -p "$port" &
server=$!
trap 'kill $server 2>/dev/null' EXIT INT TERM
while kill -0 "$parent" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 0.5; done
wait_status=0
kill -0 "$server" 2>/dev/null || { wait "$server"; wait_status=$?; }
exit $wait_status"#;
        let child = Command::new("sh")
            .args(["-c", watch, "moto-watch", &program])
            .arg(port.to_string())
            .arg(std::process::id().to_string())
            .stdout(Stdio::null())
            // A file, not a pipe: moto logs every request, and a pipe that
            // nobody reads would fill and stop it.
            .stderr(Stdio::from(log.reopen().expect("reopen the log")))
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "the S3 server for the remote tests cannot start: sh running `{program}`: {e}. \
                     It is moto's server: `pip install 'moto[server]'` (./test.sh installs it \
                     into its venv and puts it on PATH), or name it in RECORDWIRE_MOTO_SERVER."
                )
            });
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("address");
        let moto = Moto {
            child: Mutex::new(child),
            addr,
        };
        let started = Instant::now();
        loop {
            if TcpStream::connect(addr).is_ok() && http(addr, "GET", "/", b"").0 == 200 {
                break;
            }
            let exited = moto.child.lock().unwrap().try_wait().ok().flatten();
            if let Some(status) = exited {
                let err = std::fs::read_to_string(log.path()).unwrap_or_default();
                panic!(
                    "moto's S3 server exited at start ({status}): {err} \
                     (it is `pip install 'moto[server]'`, which ./test.sh installs)"
                );
            }
            // Its Python start (moto imports every service) took over a
            // minute on a loaded 2-core machine.
            if started.elapsed() > Duration::from_secs(300) {
                panic!("moto's S3 server did not answer on {addr} within 300 s");
            }
            thread::sleep(Duration::from_millis(100));
        }
        moto
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Makes `bucket` (fresh: a test's own name).
    pub fn bucket(&self, bucket: &str) {
        let (status, body) = http(self.addr, "PUT", &format!("/{bucket}"), b"");
        assert_eq!(
            status,
            200,
            "create bucket {bucket}: {}",
            String::from_utf8_lossy(&body)
        );
    }

    /// Uploads `bytes` as `bucket/key`.
    pub fn put(&self, bucket: &str, key: &str, bytes: &[u8]) {
        let (status, body) = http(self.addr, "PUT", &format!("/{bucket}/{key}"), bytes);
        assert_eq!(
            status,
            200,
            "put {bucket}/{key}: {}",
            String::from_utf8_lossy(&body)
        );
    }

    /// The storage options that reach this server at `endpoint` (its own
    /// base, or a proxy's in front of it). With a `retry_timeout` and a
    /// `read_timeout` of ten minutes: moto is one Python process, and on a
    /// loaded 2-core machine an answer of its has taken more than the 30 s
    /// default of the one and the 5 s of the other, and a read given up and
    /// asked again is a request and bytes that the tests' counts do not
    /// expect (both bounds are tested against stalling servers in
    /// `timeouts.rs`).
    pub fn options(endpoint: &str) -> Vec<(String, String)> {
        [
            ("aws_endpoint", endpoint),
            ("allow_http", "true"),
            ("retry_timeout", "600s"),
            ("read_timeout", "600s"),
            ("aws_access_key_id", "testing"),
            ("aws_secret_access_key", "testing"),
            ("aws_region", "us-east-1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }
}
