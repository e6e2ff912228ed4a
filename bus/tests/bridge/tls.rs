//! The bridges over TLS, with certificates made for the test: the TCP
//! bridge with the Python client from PyPI over Python's `ssl` (with and
//! without a client certificate, whose chain reaches the event hook), a
//! required client certificate, a client that does not speak TLS, and the
//! SockJS bridge over HTTPS and WSS with the JavaScript clients in
//! Chromium.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use codecbus_bus::bridge::{Bridge, BridgeEventType, BridgeOptions, BridgeTls, PermittedOptions};
use codecbus_bus::{EventBus, Message, ReplyOptions};
use codecbus_json::JsValue;
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::{ClientConfig, RootCertStore, crypto};

use crate::authority::Authority;
use crate::{python, runner};

/// A folder of PEM files, removed when dropped.
struct Files(PathBuf);

impl Files {
    fn new(test: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("codecbus-bridge-tls-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn put(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The DER of a PEM certificate, in base64: the PEM's body on one line.
fn der_base64(pem: &str) -> String {
    pem.lines().filter(|l| !l.starts_with("-----")).collect()
}

/// A bus with an echo, behind a TLS bridge whose hook names the client
/// certificate of each frame's connection in the header `cert` (its DER
/// in base64, or `none`).
async fn tls_bridge(
    tls: BridgeTls,
) -> (
    EventBus,
    codecbus_bus::MessageConsumer,
    codecbus_bus::bridge::BridgeServer,
) {
    let bus = EventBus::new();
    let echo = bus.consumer("echo", |m: Message<JsValue>| async move {
        let headers = m.headers().clone();
        m.reply_with(m.body().clone(), ReplyOptions::new().headers(headers))
    });
    let options = BridgeOptions::new()
        .inbound(PermittedOptions::new().address("echo"))
        .on_event(|mut event| async move {
            if event.kind() == BridgeEventType::Send {
                let cert = event.connection().peer_certificates().first().map_or_else(
                    || "none".to_owned(),
                    |der| base64::engine::general_purpose::STANDARD.encode(der),
                );
                assert_eq!(event.connection().transport(), "tls");
                event.set_header("cert", cert);
            }
            event.allow()
        });
    let server = Bridge::new(&bus, options)
        .unwrap()
        .listen_tls("127.0.0.1:0", tls)
        .await
        .unwrap();
    (bus, echo, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_over_tls_with_and_without_a_client_certificate() {
    let ca = Authority::new("codecbus bridge test CA");
    let (server_cert, server_key) = ca.leaf("bridge", true);
    let (client_cert, client_key) = ca.leaf("python client", false);
    let files = Files::new("python");
    let ca_file = files.put("ca.pem", &ca.pem());
    let cert_file = files.put("client.pem", &client_cert);
    let key_file = files.put("client.key", &client_key);
    let tls = BridgeTls::from_pem(server_cert.as_bytes(), server_key.as_bytes())
        .unwrap()
        .client_certificates(ca.pem().as_bytes(), false)
        .unwrap();
    let (_bus, _echo, server) = tls_bridge(tls).await;
    let port = server.local_addr().port();
    let with_cert = {
        let args = [ca_file.clone(), cert_file, key_file];
        tokio::task::spawn_blocking(move || {
            let args: Vec<&std::path::Path> = args.iter().map(PathBuf::as_path).collect();
            python::run_with("python_tls.py", port, &args)
        })
        .await
        .unwrap()
    };
    assert_eq!(
        with_cert["echo"]["body"],
        json!({"over": "tls"}),
        "{with_cert}"
    );
    assert_eq!(with_cert["echo"]["headers"]["h"], "v");
    assert_eq!(
        with_cert["echo"]["headers"]["cert"],
        der_base64(&client_cert)
    );
    let without = tokio::task::spawn_blocking(move || {
        python::run_with("python_tls.py", port, &[ca_file.as_path()])
    })
    .await
    .unwrap();
    assert_eq!(without["echo"]["body"], json!({"over": "tls"}), "{without}");
    assert_eq!(without["echo"]["headers"]["cert"], "none");
    server.shutdown().await;
}

/// A client config trusting `ca`, without a certificate of its own.
fn client_config(ca: &Authority) -> ClientConfig {
    let mut roots = RootCertStore::empty();
    for cert in tokio_rustls::rustls::pki_types::CertificateDer::pem_slice_iter(ca.pem().as_bytes())
    {
        roots.add(cert.unwrap()).unwrap();
    }
    // As the bridge's (see `BridgeTls`): ring, whose constructor newer
    // rustls deprecates.
    #[allow(deprecated)]
    let provider = Arc::new(crypto::ring::default_provider());
    ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth()
}

/// With client certificates required, a client without one gets no
/// answer: the connection ends in or right after the handshake. A client
/// that does not speak TLS is closed too, and the bridge goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_client_certificate_and_a_client_without_tls() {
    let ca = Authority::new("codecbus bridge test CA");
    let (server_cert, server_key) = ca.leaf("bridge", true);
    let tls = BridgeTls::from_pem(server_cert.as_bytes(), server_key.as_bytes())
        .unwrap()
        .client_certificates(ca.pem().as_bytes(), true)
        .unwrap();
    let (_bus, _echo, server) = tls_bridge(tls).await;
    let addr = server.local_addr();

    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_config(&ca)));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let answered = async {
        let mut tls = connector.connect(name, tcp).await?;
        tls.write_all(&runner::frame(br#"{"type":"ping"}"#)).await?;
        let mut len = [0u8; 4];
        tls.read_exact(&mut len).await.map(|_| ())
    };
    let answered = tokio::time::timeout(Duration::from_secs(10), answered)
        .await
        .expect("refused within the handshake's time");
    assert!(
        answered.is_err(),
        "a client without a certificate was answered"
    );

    let mut plain = tokio::net::TcpStream::connect(addr).await.unwrap();
    plain
        .write_all(&runner::frame(br#"{"type":"ping"}"#))
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(10), plain.read(&mut byte))
        .await
        .expect("a client without TLS is closed");
    assert!(
        matches!(read, Ok(0) | Err(_)) || byte[0] == 0x15,
        "a TLS alert or a close, not a frame: {read:?} {byte:?}"
    );
    server.shutdown().await;
}

/// Certificates and keys that do not go together, or are not PEM, are
/// refused when the TLS is made, each saying why.
#[test]
fn unusable_certificates_are_refused() {
    let ca = Authority::new("codecbus bridge test CA");
    let (cert, _) = ca.leaf("bridge", true);
    let (_, other_key) = ca.leaf("other", true);
    let mismatch = BridgeTls::from_pem(cert.as_bytes(), other_key.as_bytes()).unwrap_err();
    assert!(
        mismatch.to_string().starts_with("bridge TLS:"),
        "{mismatch}"
    );
    let empty = BridgeTls::from_pem(b"", b"").unwrap_err();
    assert!(empty.to_string().contains("no certificate"), "{empty}");
    let (cert, key) = ca.leaf("bridge", true);
    let tls = BridgeTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    let no_roots = tls.client_certificates(b"not pem", true).unwrap_err();
    assert!(
        no_roots.to_string().contains("no certificate"),
        "{no_roots}"
    );
}

/// The JavaScript clients from npm in Chromium over HTTPS and WSS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_clients_in_chromium_over_wss() {
    let ca = Authority::new("codecbus bridge test CA");
    let (cert, key) = ca.leaf("bridge", true);
    let tls = BridgeTls::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    crate::javascript_clients_in_chromium(Some(tls)).await;
}

/// `BridgeClient` over TLS to a bridge that requires client certificates:
/// its certificate reaches the bridge's hook; a client that trusts another
/// authority cannot connect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_client_over_tls() {
    use codecbus_bus::bridge::{BridgeClient, BridgeClientOptions, BridgeClientTls};

    let ca = Authority::new("codecbus bridge test CA");
    let (server_cert, server_key) = ca.leaf("bridge", true);
    let (client_cert, client_key) = ca.leaf("rust client", false);
    let tls = BridgeTls::from_pem(server_cert.as_bytes(), server_key.as_bytes())
        .unwrap()
        .client_certificates(ca.pem().as_bytes(), true)
        .unwrap();
    let (_bus, _echo, server) = tls_bridge(tls).await;
    let addr = server.local_addr().to_string();

    let bus = EventBus::new();
    let client_tls = BridgeClientTls::from_pem(ca.pem().as_bytes())
        .unwrap()
        .client_certificate(client_cert.as_bytes(), client_key.as_bytes())
        .unwrap();
    let client = BridgeClient::connect(&bus, &addr, BridgeClientOptions::new().tls(client_tls))
        .await
        .unwrap();
    let reply: Message<JsValue> = client.request("echo", JsValue::from(5)).await.unwrap();
    assert_eq!(reply.body(), &JsValue::from(5));
    assert_eq!(
        reply.headers().get("cert"),
        Some(der_base64(&client_cert).as_str())
    );
    client.close().await;

    let stranger = Authority::new("another CA");
    let refused = BridgeClient::connect(
        &bus,
        &addr,
        BridgeClientOptions::new()
            .tls(BridgeClientTls::from_pem(stranger.pem().as_bytes()).unwrap())
            .connect_timeout(Duration::from_secs(5)),
    )
    .await;
    assert!(
        refused.is_err(),
        "a bridge whose certificate is not trusted"
    );
    assert!(BridgeClientTls::from_pem(b"not pem").is_err());
    server.shutdown().await;
}
