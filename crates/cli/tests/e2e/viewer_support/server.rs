//! A static HTTP server on 127.0.0.1 (an ephemeral port) for the viewer pages: files from a
//! directory, plus pages and traces given in memory. One thread per connection, one request
//! per connection; stopped when dropped.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

pub struct Server {
    pub port: u16,
    content: Arc<Content>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

/// What the server answers.
struct Content {
    /// Files under this directory, by path.
    root: PathBuf,
    /// Paths answered from memory (before files), e.g. `/index.html`, `/trace`.
    memory: Mutex<HashMap<String, Arc<Vec<u8>>>>,
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript",
        "css" => "text/css",
        "json" => "application/json",
        "wasm" => "application/wasm",
        "png" => "image/png",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

fn answer(stream: TcpStream, content: &Content) {
    let mut reader = BufReader::new(stream);
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let path = first.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split(['?', '#']).next().unwrap_or("/");
    let memory = content.memory.lock().unwrap().get(path).cloned();
    let body = memory.or_else(|| {
        let rel = path.trim_start_matches('/');
        if rel.split('/').any(|c| c == "..") {
            return None;
        }
        std::fs::read(content.root.join(rel)).ok().map(Arc::new)
    });
    let mut stream = reader.into_inner();
    let _ = match body {
        Some(body) => write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Access-Control-Allow-Origin: *\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
            content_type(path),
            body.len()
        )
        .and_then(|()| stream.write_all(&body[..])),
        None => write!(
            stream,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    };
    let _ = stream.flush();
}

impl Server {
    /// Serves the files under `root` (and what [`Server::put`] adds).
    pub fn start(root: PathBuf) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        // An empty icon, for pages that ask for one (a 404 is a console error).
        let memory = HashMap::from([("/favicon.ico".to_owned(), Arc::new(Vec::new()))]);
        let content = Arc::new(Content {
            root,
            memory: Mutex::new(memory),
        });
        let (stop2, content2) = (stop.clone(), content.clone());
        let accept = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(s) = stream {
                    let c = content2.clone();
                    std::thread::spawn(move || answer(s, &c));
                }
            }
        });
        Server {
            port,
            content,
            stop,
            accept: Some(accept),
        }
    }

    /// Answers `path` with `body` from now on.
    pub fn put(&self, path: &str, body: Vec<u8>) {
        self.content
            .memory
            .lock()
            .unwrap()
            .insert(path.to_owned(), Arc::new(body));
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}
