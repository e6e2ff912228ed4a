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
//! * SockJS over plain HTTP, for browsers whose path blocks WebSockets:
//!   `{prefix}/{server}/{session}/` `xhr` and `xhr_streaming` (`POST`),
//!   `eventsource`, `htmlfile` and `jsonp` (`GET`), whose frames from the
//!   client come on `xhr_send` and `jsonp_send` (`POST`): a session across
//!   requests (`transport/polling.rs`), each answer vertx-web's;
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
use futures_util::future::Either;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, Limited, StreamBody};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::upgrade::OnUpgrade;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::bridge::conn::{self, Shared};
use crate::bridge::error::BridgeError;
use crate::bridge::server::{self, Bridge, BridgeServer};
use crate::bridge::tls::{Acceptor, BridgeTls};
use crate::bridge::transport::polling::{self, Attach, Receiving, Sessions};
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
    ///
    /// # Cancel safety
    ///
    /// Cancelling before it returns listens on nothing.
    pub async fn listen_sockjs<A>(
        self,
        address: A,
        options: SockJsOptions,
    ) -> Result<BridgeServer, BridgeError>
    where
        A: ToSocketAddrs + std::fmt::Debug,
    {
        let listener = server::bind(address).await?;
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

/// What the HTTP connections of a SockJS bridge share: the bridge, its
/// options, and the sessions of the HTTP transports with their tasks.
struct Front {
    shared: Arc<Shared>,
    options: Arc<SockJsOptions>,
    schemas: Bytes,
    sessions: Sessions,
    /// The sessions' connections, joined when the bridge stops.
    tasks: Mutex<JoinSet<()>>,
}

async fn accept(
    shared: Arc<Shared>,
    options: Arc<SockJsOptions>,
    tls: Option<Acceptor>,
    listener: TcpListener,
    stop: watch::Receiver<bool>,
) {
    let front = Arc::new(Front {
        schemas: Bytes::from(shared.schemas.clone()),
        shared: Arc::clone(&shared),
        options,
        sessions: Sessions::default(),
        tasks: Mutex::new(JoinSet::new()),
    });
    let serving = Arc::clone(&front);
    server::accept_with(
        shared,
        listener,
        stop,
        "SockJS",
        move |stream: TcpStream, peer, stop| {
            let front = Arc::clone(&serving);
            let tls = tls.clone();
            async move {
                let _ = stream.set_nodelay(true);
                match tls {
                    None => connection(front, stream, peer, Vec::new(), stop).await,
                    Some(tls) => {
                        let wait = front.shared.limits.write_timeout;
                        if let Some((stream, certificates)) = tls.accept(stream, wait).await {
                            connection(front, stream, peer, certificates, stop).await;
                        }
                    }
                }
            }
        },
    )
    .await;
    // No connection makes sessions any more: the last ones end (they
    // stop with the bridge) and are joined.
    let mut tasks =
        std::mem::take(&mut *front.tasks.lock().unwrap_or_else(PoisonError::into_inner));
    while tasks.join_next().await.is_some() {}
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
    front: Arc<Front>,
    stream: S,
    peer: SocketAddr,
    certificates: Vec<Vec<u8>>,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let upgrade: Upgrade = Arc::new(Mutex::new(None));
    let certificates = Arc::new(certificates);
    let service = {
        let upgrade = Arc::clone(&upgrade);
        let front = Arc::clone(&front);
        let certificates = Arc::clone(&certificates);
        let stop = stop.clone();
        service_fn(move |request: Request<Incoming>| {
            let front = Arc::clone(&front);
            match session_route(&front.options, &request) {
                Some((id, endpoint)) => {
                    let origin = (peer, Arc::clone(&certificates), stop.clone());
                    Either::Left(async move {
                        Ok::<_, Infallible>(polling(&front, request, id, endpoint, origin).await)
                    })
                }
                None => {
                    let answer = route(&front.options, &front.schemas, request, &upgrade);
                    Either::Right(std::future::ready(Ok::<_, Infallible>(
                        answer.map(|body| body.boxed()),
                    )))
                }
            }
        })
    };
    // Silent for the idle timeout between requests, the connection is
    // closed; a streaming response lasts as long as its session wants.
    let http = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(front.shared.limits.idle_timeout)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    let served = tokio::select! {
        served = http => served,
        _ = stop.changed() => return,
    };
    if served.is_err() {
        return;
    }
    let shared = Arc::clone(&front.shared);
    let options = Arc::clone(&front.options);
    let certificates = Arc::unwrap_or_clone(certificates);
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
    let budget = shared.budget();
    conn::serve(shared, source, sink, Dialect::SockJs, origin, budget, stop).await;
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
fn cors<B, C>(request: &Request<B>, response: &mut Response<C>) {
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

/// A CORS preflight's answer: cached a year, for `methods`.
fn preflight(headers: &mut hyper::HeaderMap, methods: &'static str) {
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public,max-age=31536000"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(methods),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("31536000"),
    );
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
            preflight(response.headers_mut(), "OPTIONS, GET");
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

/// The body of every answer of the SockJS bridge.
type Body = BoxBody<Bytes, Infallible>;

/// An HTTP transport's endpoint under `{prefix}/{server}/{session}/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    Xhr,
    XhrStreaming,
    XhrSend,
    EventSource,
    HtmlFile,
    Jsonp,
    JsonpSend,
}

/// The session and endpoint a request names, when it names one of the
/// HTTP transports' endpoints (whatever its method).
fn session_route(
    options: &SockJsOptions,
    request: &Request<Incoming>,
) -> Option<(String, Endpoint)> {
    let rest = request.uri().path().strip_prefix(options.prefix.as_str())?;
    let parts: Vec<&str> = rest.strip_prefix('/')?.split('/').collect();
    let [server, session, endpoint] = parts.as_slice() else {
        return None;
    };
    if !session_part(server) || !session_part(session) {
        return None;
    }
    let endpoint = match *endpoint {
        "xhr" => Endpoint::Xhr,
        "xhr_streaming" => Endpoint::XhrStreaming,
        "xhr_send" => Endpoint::XhrSend,
        "eventsource" => Endpoint::EventSource,
        "htmlfile" => Endpoint::HtmlFile,
        "jsonp" => Endpoint::Jsonp,
        "jsonp_send" => Endpoint::JsonpSend,
        _ => return None,
    };
    Some(((*session).to_owned(), endpoint))
}

fn full(body: impl Into<Bytes>) -> Body {
    Full::new(body.into()).boxed()
}

/// An answer with a status and a plain body, nothing else (vertx-web's
/// refusals of a send or a callback).
fn plain(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response
}

/// `Set-Cookie`: the request's own `JSESSIONID` when it sends one (the
/// part of its `Cookie` header that starts with it), `dummy` otherwise,
/// as vertx-web.
fn cookie<B>(request: &Request<B>) -> HeaderValue {
    let own = request
        .headers()
        .get(header::COOKIE)
        .and_then(|c| c.to_str().ok())
        .and_then(|c| c.split(';').find(|part| part.starts_with("JSESSIONID")))
        .and_then(|part| HeaderValue::from_str(&format!("{part}; path=/")).ok());
    own.unwrap_or_else(|| HeaderValue::from_static("JSESSIONID=dummy; path=/"))
}

/// The headers of a session's answers: no caching, the cookie, and for
/// the xhr transports CORS (the request's `Access-Control-Request-Headers`
/// echoed).
fn session_headers<B>(request: &Request<B>, response: &mut Response<Body>, cors_too: bool) {
    let cookie = cookie(request);
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(NO_CACHE));
    headers.insert(header::SET_COOKIE, cookie);
    if cors_too {
        cors(request, response);
        let headers = response.headers_mut();
        if let Some(asked) = request
            .headers()
            .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        {
            headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
        }
    }
}

/// An HTTP date a year from now: a preflight's `Expires`.
fn a_year_from_now() -> HeaderValue {
    let then = std::time::SystemTime::now() + Duration::from_secs(365 * 24 * 3600);
    HeaderValue::from_str(&httpdate::fmt_http_date(then))
        .unwrap_or_else(|_| HeaderValue::from_static("0"))
}

/// `%XX` and `+` of a form's body decoded.
fn form_decode(body: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < body.len() => match (hex(body[i + 1]), hex(body[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    out
}

/// The query parameter `c` or `callback` of a request.
fn callback_of(request: &Request<Incoming>) -> Option<String> {
    request.uri().query()?.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        matches!(name, "c" | "callback")
            .then(|| String::from_utf8_lossy(&form_decode(value.as_bytes())).into_owned())
    })
}

/// Answers a request to one of the HTTP transports' endpoints: a session's
/// receiving request (opening the session when it is new), a send, or a
/// CORS preflight; what vertx-web 3.9.4 answers, byte for byte.
async fn polling(
    front: &Arc<Front>,
    request: Request<Incoming>,
    id: String,
    endpoint: Endpoint,
    (peer, certificates, stop): (SocketAddr, Arc<Vec<Vec<u8>>>, watch::Receiver<bool>),
) -> Response<Body> {
    let method = request.method().clone();
    let xhr = matches!(
        endpoint,
        Endpoint::Xhr | Endpoint::XhrStreaming | Endpoint::XhrSend
    );
    if xhr && method == Method::OPTIONS {
        let mut response = Response::new(full(Bytes::new()));
        *response.status_mut() = StatusCode::NO_CONTENT;
        session_headers(&request, &mut response, true);
        let headers = response.headers_mut();
        preflight(headers, "OPTIONS, POST");
        headers.insert(header::EXPIRES, a_year_from_now());
        return response;
    }
    let wanted = match endpoint {
        Endpoint::Xhr | Endpoint::XhrStreaming | Endpoint::XhrSend | Endpoint::JsonpSend => {
            Method::POST
        }
        Endpoint::EventSource | Endpoint::HtmlFile | Endpoint::Jsonp => Method::GET,
    };
    if method != wanted {
        return not_found().map(|body| body.boxed());
    }
    let kind = match endpoint {
        Endpoint::XhrSend | Endpoint::JsonpSend => {
            return send(front, request, &id, endpoint).await;
        }
        Endpoint::Xhr => Receiving::XhrPolling,
        Endpoint::XhrStreaming => Receiving::XhrStreaming,
        Endpoint::EventSource => Receiving::EventSource,
        Endpoint::HtmlFile | Endpoint::Jsonp => {
            let limit = (endpoint == Endpoint::Jsonp).then_some(32);
            match callback_of(&request) {
                None => {
                    return plain(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "\"callback\" parameter required\n",
                    );
                }
                Some(callback) if !polling::callback_ok(&callback, limit) => {
                    return plain(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "invalid \"callback\" parameter\n",
                    );
                }
                Some(callback) if endpoint == Endpoint::Jsonp => Receiving::Jsonp(callback),
                Some(callback) => Receiving::HtmlFile(callback),
            }
        }
    };
    let prelude = kind.prelude();
    let body = match front.sessions.get(&id) {
        None => {
            let limits = front.shared.limits;
            let budget = front.shared.budget();
            let Some((session, source, sink)) = front.sessions.open(
                &id,
                Arc::clone(&budget),
                limits.max_frame,
                front.options.heartbeat,
                limits.max_connections,
            ) else {
                return plain(StatusCode::SERVICE_UNAVAILABLE, "");
            };
            let origin = conn::Origin {
                peer: Some(peer),
                transport: "sockjs",
                certificates: Arc::unwrap_or_clone(certificates),
            };
            let served = Arc::clone(front);
            let ended = Arc::clone(&session);
            let mut tasks = front.tasks.lock().unwrap_or_else(PoisonError::into_inner);
            // Ended sessions' tasks are let go here, not kept to the end.
            while tasks.try_join_next().is_some() {}
            tasks.spawn(async move {
                tracing::debug!(%peer, "SockJS session");
                conn::serve(
                    Arc::clone(&served.shared),
                    source,
                    sink,
                    Dialect::SockJs,
                    origin,
                    budget,
                    stop,
                )
                .await;
                served.sessions.remove(&id, &ended);
            });
            let opened = kind.wrap("o");
            if kind.streaming() {
                match session.attach(kind.clone(), vec![prelude, opened]) {
                    Attach::Body(body) => StreamBody::new(body).boxed(),
                    Attach::Busy | Attach::Gone => full(Bytes::new()),
                }
            } else {
                full(opened)
            }
        }
        Some(session) => match session.attach(kind.clone(), vec![prelude.clone()]) {
            Attach::Body(body) => StreamBody::new(body).boxed(),
            Attach::Busy => full(
                [
                    prelude,
                    kind.wrap(r#"c[2010,"Another connection still open"]"#),
                ]
                .concat(),
            ),
            Attach::Gone => full([prelude, kind.wrap(r#"c[3000,"Go away!"]"#)].concat()),
        },
    };
    let mut response = Response::new(body);
    let xhr = matches!(kind, Receiving::XhrPolling | Receiving::XhrStreaming);
    session_headers(&request, &mut response, xhr);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(kind.content_type()),
    );
    if matches!(kind, Receiving::Jsonp(_)) {
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
    }
    response
}

/// A send request: its frames to the session's connection.
async fn send(
    front: &Arc<Front>,
    request: Request<Incoming>,
    id: &str,
    endpoint: Endpoint,
) -> Response<Body> {
    let jsonp = endpoint == Endpoint::JsonpSend;
    let form = if jsonp {
        let content_type = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|c| c.to_str().ok())
            .unwrap_or_default();
        if content_type.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
            true
        } else if content_type.eq_ignore_ascii_case("text/plain") {
            false
        } else {
            return plain(StatusCode::INTERNAL_SERVER_ERROR, "Invalid Content-Type");
        }
    } else {
        false
    };
    let Some(session) = front.sessions.get(id) else {
        let mut response = plain(StatusCode::NOT_FOUND, "");
        let cookie = cookie(&request);
        response.headers_mut().insert(header::SET_COOKIE, cookie);
        return response;
    };
    // Room for several frames, each escaped, each still held to the
    // frame limit (as a WebSocket message).
    let limit = front
        .shared
        .limits
        .max_frame
        .saturating_mul(2)
        .saturating_add(1024);
    let (parts, body) = request.into_parts();
    let request = Request::from_parts(parts, ());
    let payload = match Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return plain(StatusCode::PAYLOAD_TOO_LARGE, "Payload too large."),
    };
    let payload = if form {
        if payload.len() <= 2 || !payload.starts_with(b"d=") {
            return plain(StatusCode::INTERNAL_SERVER_ERROR, "Payload expected.");
        }
        Bytes::from(form_decode(&payload).split_off(2))
    } else {
        payload
    };
    if payload.is_empty() {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, "Payload expected.");
    }
    let Some(frames) = polling::payload_frames(&payload) else {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, "Broken JSON encoding.");
    };
    if !session.receive(frames).await {
        let mut response = plain(StatusCode::NOT_FOUND, "");
        response
            .headers_mut()
            .insert(header::SET_COOKIE, cookie(&request));
        return response;
    }
    let (status, body) = if jsonp {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::NO_CONTENT, "")
    };
    let mut response = plain(status, body);
    session_headers(&request, &mut response, !jsonp);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=UTF-8"),
    );
    response
}
