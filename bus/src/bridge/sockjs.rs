//! The SockJS bridge: what vertx-web 3.9.4's `SockJSHandler.bridge` serves
//! at `/eventbus`, so that Vert.x's JavaScript clients
//! (`@vertx/eventbus-bridge-client.js`, `vertx3-eventbus-client`, over
//! `sockjs-client`) reach the bus from a browser.
//!
//! Served under the prefix ([`SockJsOptions::prefix`], `/eventbus` unless
//! set otherwise), on HTTP/1.1:
//!
//! * `GET {prefix}` and `{prefix}/`: `Welcome to SockJS!`;
//! * `GET {prefix}/info` (and its CORS preflight `OPTIONS`): the SockJS
//!   info, `{"websocket":true,"cookie_needed":false,"origins":["*:*"],"entropy":N}`;
//! * `GET {prefix}/{server}/{session}/websocket`: SockJS over WebSocket.
//!   The bridge writes `o` on open, `a["<frame>"]` for each frame, `h`
//!   every heartbeat interval of silence and `c[3000,"Go away!"]` before
//!   it closes; the client writes JSON arrays of frames, each frame a JSON
//!   string;
//! * `GET {prefix}/websocket`: the raw WebSocket, one frame per WebSocket
//!   message (the bridge writes binary messages, as Vert.x does);
//! * `GET {prefix}/schemas`: the JSON Schema of the bodies of each typed
//!   address, by address ([`Bridge::json_schemas`]; not Vert.x's);
//! * the files given with [`SockJsOptions::file`], at their paths.
//!
//! Each frame is the JSON of the TCP bridge's frames, handled by the same
//! connection code (permissions, limits, bodies), in the SockJS bridge's
//! dialect: a message is `{"type":"rec",...}` (no `send`, `headers` only
//! when there are some), a refusal `{"type":"err","body":"access_denied"}`,
//! a `ping` gets no answer.

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::{BuildHasher, Hasher};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::upgrade::OnUpgrade;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::watch;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::bridge::conn::{self, Shared};
use crate::bridge::error::BridgeError;
use crate::bridge::server::{self, Bridge, BridgeServer};
use crate::bridge::tls::{Acceptor, BridgeTls};
use crate::bridge::transport::websocket::{self, Framing};
use crate::bridge::vocab::Dialect;

/// SockJS's heartbeat interval unless set otherwise: 25 s (Vert.x's and
/// SockJS's default).
pub const DEFAULT_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(25);

/// The HTTP side of a SockJS bridge: where it is served, its heartbeat,
/// and the files served beside it (a page and its scripts).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use codecbus_bus::bridge::SockJsOptions;
///
/// let options = SockJsOptions::new()
///     .prefix("/eventbus")
///     .heartbeat_interval(Duration::from_secs(10))
///     .file("/", "text/html; charset=utf-8", "<!doctype html><title>bus</title>");
/// ```
#[derive(Clone, Debug)]
pub struct SockJsOptions {
    prefix: String,
    heartbeat: Duration,
    files: HashMap<String, (String, Bytes)>,
    tls: Option<BridgeTls>,
}

impl Default for SockJsOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl SockJsOptions {
    /// The bridge at `/eventbus`, a heartbeat every
    /// [`DEFAULT_HEARTBEAT_INTERVAL`], no files.
    pub fn new() -> Self {
        Self {
            prefix: "/eventbus".into(),
            heartbeat: DEFAULT_HEARTBEAT_INTERVAL,
            files: HashMap::new(),
            tls: None,
        }
    }

    /// The path the bridge is served under (what the JavaScript client's
    /// URL ends with), `/eventbus` unless set otherwise. A trailing `/` is
    /// dropped; an empty prefix serves at the root.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        let prefix = prefix.into();
        let trimmed = prefix.trim_end_matches('/');
        self.prefix = if trimmed.starts_with('/') || trimmed.is_empty() {
            trimmed.to_string()
        } else {
            format!("/{trimmed}")
        };
        self
    }

    /// How long a SockJS session may go without a frame from the bridge
    /// before it writes a heartbeat (`h`). Default
    /// [`DEFAULT_HEARTBEAT_INTERVAL`].
    #[must_use]
    pub fn heartbeat_interval(mut self, interval: Duration) -> Self {
        self.heartbeat = interval.max(Duration::from_millis(1));
        self
    }

    /// Serves over HTTPS, and so the WebSockets over WSS, with `tls`
    /// (client certificates as it asks for them; the chain a client
    /// presented reaches the event hook). The handshake must end within
    /// the write timeout.
    #[must_use]
    pub fn tls(mut self, tls: BridgeTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Serves `contents` at `path` (exactly, with `GET`), with the given
    /// `Content-Type`: a page that opens the bridge, its scripts.
    #[must_use]
    pub fn file(
        mut self,
        path: impl Into<String>,
        content_type: impl Into<String>,
        contents: impl Into<Vec<u8>>,
    ) -> Self {
        self.files.insert(
            path.into(),
            (content_type.into(), Bytes::from(contents.into())),
        );
        self
    }
}

impl Bridge {
    /// Listens on `address` and serves the SockJS bridge there (and the
    /// `options`' files) until the returned server is shut down or
    /// dropped. A clone of the bridge may serve the TCP bridge beside it;
    /// the connection limit counts each transport's connections apart.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Bind`] when the address cannot be listened on.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_bus::bridge::{Bridge, BridgeOptions, PermittedOptions, SockJsOptions};
    /// use codecbus_bus::{EventBus, Message};
    /// use codecbus_json::JsValue;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let bus = EventBus::new();
    /// let _echo = bus.consumer("echo", |m: Message<JsValue>| async move {
    ///     m.reply(m.body().clone())
    /// });
    /// let options = BridgeOptions::new().inbound(PermittedOptions::new().address("echo"));
    /// let server = Bridge::new(&bus, options)?
    ///     .listen_sockjs("127.0.0.1:0", SockJsOptions::new())
    ///     .await?;
    /// println!("new EventBus('http://{}/eventbus')", server.local_addr());
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn listen_sockjs<A>(
        self,
        address: A,
        options: SockJsOptions,
    ) -> Result<BridgeServer, BridgeError>
    where
        A: ToSocketAddrs + std::fmt::Debug,
    {
        let named = format!("{address:?}");
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| BridgeError::Bind {
                address: named,
                source,
            })?;
        self.serve_sockjs(listener, options)
    }

    /// Serves the SockJS bridge on a listener of the caller's.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Bind`] when the listener has no local address.
    pub fn serve_sockjs(
        self,
        listener: TcpListener,
        options: SockJsOptions,
    ) -> Result<BridgeServer, BridgeError> {
        let local_addr = listener.local_addr().map_err(|source| BridgeError::Bind {
            address: "the given listener".into(),
            source,
        })?;
        let tls = options.tls.as_ref().map(|t| t.acceptor(true)).transpose()?;
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(accept(
            self.shared,
            Arc::new(options),
            tls,
            listener,
            stopped,
        ));
        tracing::debug!(%local_addr, "SockJS bridge listening");
        Ok(BridgeServer {
            local_addr,
            stop,
            task: Some(task),
        })
    }
}

async fn accept(
    shared: Arc<Shared>,
    options: Arc<SockJsOptions>,
    tls: Option<Acceptor>,
    listener: TcpListener,
    stop: watch::Receiver<bool>,
) {
    let serve_shared = Arc::clone(&shared);
    server::accept_with(
        shared,
        listener,
        stop,
        "SockJS",
        move |stream: TcpStream, peer, stop| {
            let shared = Arc::clone(&serve_shared);
            let options = Arc::clone(&options);
            let tls = tls.clone();
            async move {
                let _ = stream.set_nodelay(true);
                match tls {
                    None => connection(shared, options, stream, peer, Vec::new(), stop).await,
                    Some(tls) => {
                        let wait = shared.limits.write_timeout;
                        if let Some((stream, certificates)) = tls.accept(stream, wait).await {
                            connection(shared, options, stream, peer, certificates, stop).await;
                        }
                    }
                }
            }
        },
    )
    .await;
}

/// Which WebSocket a request upgraded to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// `{prefix}/{server}/{session}/websocket`: SockJS framing.
    SockJs,
    /// `{prefix}/websocket`: one frame per message.
    Raw,
}

/// Where a request's upgrade is handed from the HTTP service to its
/// connection's task.
type Upgrade = Arc<Mutex<Option<(OnUpgrade, Transport)>>>;

/// One HTTP connection: requests answered until one upgrades to a
/// WebSocket, which then becomes a bridge connection in the same task.
/// Silent for the idle timeout before an upgrade, it is closed.
async fn connection<S>(
    shared: Arc<Shared>,
    options: Arc<SockJsOptions>,
    stream: S,
    peer: SocketAddr,
    certificates: Vec<Vec<u8>>,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let upgrade: Upgrade = Arc::new(Mutex::new(None));
    let service = {
        let upgrade = Arc::clone(&upgrade);
        let options = Arc::clone(&options);
        let schemas = Bytes::from(shared.schemas.clone());
        service_fn(move |request: Request<Incoming>| {
            let answer = route(&options, &schemas, request, &upgrade);
            async move { Ok::<_, Infallible>(answer) }
        })
    };
    let http = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    let served = tokio::select! {
        served = timeout(shared.limits.idle_timeout, http) => served,
        _ = stop.changed() => return,
    };
    if !matches!(served, Ok(Ok(()))) {
        return;
    }
    let taken = upgrade
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let Some((on_upgrade, transport)) = taken else {
        return;
    };
    let upgraded = match on_upgrade.await {
        Ok(upgraded) => upgraded,
        Err(e) => {
            tracing::debug!(%peer, error = %e, "SockJS upgrade failed");
            return;
        }
    };
    let framing = match transport {
        Transport::SockJs => Framing::SockJs(options.heartbeat),
        Transport::Raw => Framing::Raw,
    };
    let limits = shared.limits;
    let Some((source, sink)) =
        websocket::open(upgraded, framing, limits.max_frame, limits.write_timeout).await
    else {
        return;
    };
    tracing::debug!(%peer, "SockJS bridge connection");
    let origin = conn::Origin {
        peer: Some(peer),
        transport: match framing {
            Framing::SockJs(_) => "sockjs",
            Framing::Raw => "websocket",
        },
        certificates,
    };
    conn::serve(shared, source, sink, Dialect::SockJs, origin, stop).await;
}

/// Headers of SockJS's answers that a browser must not cache.
const NO_CACHE: &str = "no-store, no-cache, no-transform, must-revalidate, max-age=0";

fn respond(
    status: StatusCode,
    content_type: &str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    if let Ok(value) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

fn not_found() -> Response<Full<Bytes>> {
    respond(
        StatusCode::NOT_FOUND,
        "text/html; charset=utf-8",
        "<html><body><h1>Resource not found</h1></body></html>",
    )
}

/// SockJS's CORS headers: the request's origin (and credentials) when it
/// names one, `*` otherwise.
fn cors(request: &Request<Incoming>, response: &mut Response<Full<Bytes>>) {
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .filter(|o| o.as_bytes() != b"null")
        .cloned();
    let headers = response.headers_mut();
    match origin {
        Some(origin) => {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("true"),
            );
        }
        None => {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_ORIGIN,
                HeaderValue::from_static("*"),
            );
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("false"),
            );
        }
    }
}

/// The SockJS info, with fresh entropy.
fn info() -> String {
    let entropy = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish() as u32;
    serde_json::json!({
        "websocket": true,
        "cookie_needed": false,
        "origins": ["*:*"],
        "entropy": entropy,
    })
    .to_string()
}

/// A SockJS server or session id: not empty, without dots or slashes.
fn session_part(part: &str) -> bool {
    !part.is_empty() && !part.contains(['.', '/'])
}

/// Answers one HTTP request; a WebSocket upgrade leaves its pending
/// upgrade in `upgrade` for the connection's task.
fn route(
    options: &SockJsOptions,
    schemas: &Bytes,
    mut request: Request<Incoming>,
    upgrade: &Upgrade,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    if request.method() == Method::GET
        && let Some((content_type, contents)) = options.files.get(&path)
    {
        return respond(StatusCode::OK, content_type, contents.clone());
    }
    let Some(rest) = path.strip_prefix(options.prefix.as_str()) else {
        return not_found();
    };
    let method = request.method().clone();
    let transport = match rest {
        "" | "/" if method == Method::GET => {
            return respond(
                StatusCode::OK,
                "text/plain; charset=UTF-8",
                "Welcome to SockJS!\n",
            );
        }
        "/info" if method == Method::GET => {
            let mut response = respond(StatusCode::OK, "application/json; charset=UTF-8", info());
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static(NO_CACHE));
            cors(&request, &mut response);
            return response;
        }
        "/schemas" if method == Method::GET => {
            let mut response = respond(
                StatusCode::OK,
                "application/schema+json; charset=UTF-8",
                schemas.clone(),
            );
            cors(&request, &mut response);
            return response;
        }
        "/info" if method == Method::OPTIONS => {
            let mut response = respond(StatusCode::NO_CONTENT, "text/plain", Bytes::new());
            response.headers_mut().remove(header::CONTENT_TYPE);
            let headers = response.headers_mut();
            headers.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("public,max-age=31536000"),
            );
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("OPTIONS, GET"),
            );
            headers.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("31536000"),
            );
            cors(&request, &mut response);
            return response;
        }
        "/websocket" if method == Method::GET => Transport::Raw,
        _ => {
            let parts: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
            match parts.as_slice() {
                [server, session, "websocket"]
                    if method == Method::GET && session_part(server) && session_part(session) =>
                {
                    Transport::SockJs
                }
                _ => return not_found(),
            }
        }
    };
    let headers = request.headers();
    let wants_websocket = headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let key = headers.get(header::SEC_WEBSOCKET_KEY).cloned();
    let version_13 = headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_some_and(|v| v.as_bytes() == b"13");
    let (true, Some(key), true) = (wants_websocket, key, version_13) else {
        return respond(
            StatusCode::BAD_REQUEST,
            "text/plain; charset=UTF-8",
            "Can \"Upgrade\" only to \"WebSocket\".",
        );
    };
    let Ok(accept) = HeaderValue::from_str(&derive_accept_key(key.as_bytes())) else {
        return respond(StatusCode::BAD_REQUEST, "text/plain", "bad key");
    };
    let on_upgrade = hyper::upgrade::on(&mut request);
    *upgrade.lock().unwrap_or_else(PoisonError::into_inner) = Some((on_upgrade, transport));
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    response
}
